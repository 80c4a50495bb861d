import FileVersions
import Testing

@Suite struct FileVersionOriginTests {
    @Test func originsAreSpelledAsInTheStoreFormat() {
        #expect(FileVersion.Origin.allCases.map(\.rawValue) == ["save", "autosave", "conflict", "externalChange", "adoptedCopy", "added"])
    }
}
