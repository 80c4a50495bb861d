import ArgumentParser
import Foundation

struct Init: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Create the library folder if it is missing.")
    @OptionGroup var options: LibraryOptions

    func run() async throws {
        try await runReportingErrors {
            try options.notesLibrary.create()
            print("Library at \(options.libraryURL.path)")
        }
    }
}
