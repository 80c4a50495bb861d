import DocumentKitTesting
@testable import notes
import Testing

@Suite struct LineMergeTests {
    /// Merges with the default labels.
    static func merge(_ base: String?, _ ours: String, _ theirs: String) -> LineMerge.Result {
        LineMerge.merge(base: base, ours: ours, theirs: theirs)
    }

    /// A clean result.
    static func clean(_ text: String) -> LineMerge.Result {
        LineMerge.Result(text: text, conflictCount: 0)
    }

    // MARK: Clean merges

    @Test func anEditOnOneSideIsTakenWhicheverSideMadeIt() {
        let base = "one\ntwo\nthree\n"
        let edited = "one\n2\nthree\n"
        #expect(Self.merge(base, edited, base) == Self.clean(edited))
        #expect(Self.merge(base, base, edited) == Self.clean(edited))
    }

    @Test func nonOverlappingEditsOnBothSidesMergeCleanly() {
        let base = "a\nb\nc\nd\ne\n"
        #expect(Self.merge(base, "A\nb\nc\nd\ne\n", "a\nb\nc\nd\nE\n") == Self.clean("A\nb\nc\nd\nE\n"))
        #expect(Self.merge(base, "a\nb\nc\nd\n", "a\nB\nc\nd\ne\n") == Self.clean("a\nB\nc\nd\n"))
    }

    @Test func identicalEditsOnBothSidesAreTakenOnce() {
        let base = "a\nb\nc\n"
        #expect(Self.merge(base, "a\nB\nnew\nc\n", "a\nB\nnew\nc\n") == Self.clean("a\nB\nnew\nc\n"))
    }

    @Test func insertionsAtTheStartAndEndMergeCleanly() {
        let base = "middle\n"
        #expect(Self.merge(base, "first\nmiddle\n", "middle\nlast\n") == Self.clean("first\nmiddle\nlast\n"))
        #expect(Self.merge(base, "middle\nlast\n", "first\nmiddle\n") == Self.clean("first\nmiddle\nlast\n"))
    }

    @Test func aDeletionOnOneSideAndAnEditElsewhereMergeCleanly() {
        #expect(Self.merge("a\nb\nc\nd\n", "a\nc\nd\n", "a\nb\nc\nD\n") == Self.clean("a\nc\nD\n"))
    }

    @Test func anEmptyBaseWithOneSideWritingTakesThatSide() {
        #expect(Self.merge("", "written\n", "") == Self.clean("written\n"))
        #expect(Self.merge("", "", "written") == Self.clean("written"))
        #expect(Self.merge("", "", "") == Self.clean(""))
    }

    @Test func theFinalNewlineIsKeptOrLeftOutAsTheChangingSideHasIt() {
        #expect(Self.merge("a\nb", "A\nb", "a\nb") == Self.clean("A\nb"))
        #expect(Self.merge("a\nm\nb\n", "a\nm\nb", "A\nm\nb\n") == Self.clean("A\nm\nb"))
        #expect(Self.merge("a\nm\nb", "a\nm\nb\n", "A\nm\nb") == Self.clean("A\nm\nb\n"))
        #expect(Self.merge("a\nm\nb\nc", "A\nm\nb\nc", "a\nm\nb\nc\nd") == Self.clean("A\nm\nb\nc\nd"))
    }

    @Test func addingOrRemovingTheFinalNewlineChangesTheLastLine() {
        // So it clashes with an edit of the line before, as any adjacent edits do.
        #expect(Self.merge("a\nb\n", "a\nb", "A\nb\n").conflictCount == 1)
    }

    @Test func crlfLinesAreKeptAsTheyAre() {
        let base = "one\r\ntwo\r\nthree\r\n"
        #expect(Self.merge(base, "ONE\r\ntwo\r\nthree\r\n", "one\r\ntwo\r\nTHREE\n") == Self.clean("ONE\r\ntwo\r\nTHREE\n"))
        // A line differing only in its ending is a change.
        #expect(Self.merge(base, "one\ntwo\r\nthree\r\n", base) == Self.clean("one\ntwo\r\nthree\r\n"))
    }

    @Test func unicodeLinesMergeByteForByte() {
        let base = "café ☕️\nnaïve\n日本語\n👩‍👩‍👧 family\n"
        let ours = "café ☕️\nnaïve 🎉\n日本語\n👩‍👩‍👧 family\n"
        let theirs = "café ☕️\nnaïve\n日本語\n👩‍👩‍👧 famille\n"
        #expect(Self.merge(base, ours, theirs) == Self.clean("café ☕️\nnaïve 🎉\n日本語\n👩‍👩‍👧 famille\n"))
        // Decomposed é is a different line from precomposed é, though equal as Swift strings.
        let decomposed = "cafe\u{301} ☕️\nnaïve\n日本語\n👩‍👩‍👧 family\n"
        let merged = Self.merge(base, base, decomposed)
        #expect(Array(merged.text.utf8) == Array(decomposed.utf8))
    }

    // MARK: Clashes

    @Test func aClashKeepsBothSidesLinesBetweenMarkers() {
        let merged = Self.merge("a\nb\nc\n", "a\nours\nc\n", "a\ntheirs 1\ntheirs 2\nc\n")
        #expect(merged.conflictCount == 1)
        #expect(merged.text == """
            a
            <<<<<<< current
            ours
            =======
            theirs 1
            theirs 2
            >>>>>>> conflict
            c

            """)
    }

    @Test func twoSeparateClashesCountTwo() {
        let merged = Self.merge("a\nb\nc\nd\ne\n", "A1\nb\nc\nd\nE1\n", "A2\nb\nc\nd\nE2\n")
        #expect(merged.conflictCount == 2)
        #expect(merged.text == """
            <<<<<<< current
            A1
            =======
            A2
            >>>>>>> conflict
            b
            c
            d
            <<<<<<< current
            E1
            =======
            E2
            >>>>>>> conflict

            """)
    }

    @Test func aDeletionAgainstAnEditClashesWithAnEmptySide() {
        let merged = Self.merge("a\nb\nc\n", "a\nc\n", "a\nB\nc\n")
        #expect(merged == LineMerge.Result(text: "a\n<<<<<<< current\n=======\nB\n>>>>>>> conflict\nc\n", conflictCount: 1))
    }

    @Test func differentInsertionsAtTheSamePlaceClash() {
        let merged = Self.merge("a\n", "a\nmine\n", "a\nyours\n")
        #expect(merged == LineMerge.Result(text: "a\n<<<<<<< current\nmine\n=======\nyours\n>>>>>>> conflict\n", conflictCount: 1))
    }

    @Test func aClashedLastLineWithoutNewlineGetsOneBeforeTheMarker() {
        let merged = Self.merge("a\nb", "a\nours", "a\ntheirs")
        #expect(merged == LineMerge.Result(text: "a\n<<<<<<< current\nours\n=======\ntheirs\n>>>>>>> conflict\n", conflictCount: 1))
    }

    @Test func theMarkersCarryTheGivenLabels() {
        let merged = LineMerge.merge(base: "x\n", ours: "y\n", theirs: "z\n", oursLabel: "mine", theirsLabel: "phone")
        #expect(merged.text == "<<<<<<< mine\ny\n=======\nz\n>>>>>>> phone\n")
    }

    // MARK: Without a base

    @Test func withoutABaseEqualLinesAreKeptAndEveryDifferenceClashes() {
        let merged = Self.merge(nil, "same\nmine\nshared\n", "same\nshared\nextra\n")
        #expect(merged.conflictCount == 2)
        #expect(merged.text == """
            same
            <<<<<<< current
            mine
            =======
            >>>>>>> conflict
            shared
            <<<<<<< current
            =======
            extra
            >>>>>>> conflict

            """)
    }

    @Test func withoutABaseEqualTextsMergeCleanly() {
        #expect(Self.merge(nil, "a\nb", "a\nb") == Self.clean("a\nb"))
        #expect(Self.merge(nil, "", "") == Self.clean(""))
    }

    // MARK: Diff

    @Test func matchesFindALongestCommonSubsequence() {
        let pairs = LineMerge.matches([1, 2, 3, 4, 5, 6], [2, 9, 4, 5, 7, 6])
        #expect(pairs.map(\.0) == [1, 3, 4, 5])
        #expect(pairs.map(\.1) == [0, 2, 3, 5])
    }

    @Test func matchesAreAsLongAsALongestCommonSubsequenceOfRandomSequences() {
        var random = SeededRandom(seed: 0x1C5)
        for _ in 0..<300 {
            let a = (0..<random.next(upTo: 30)).map { _ in random.next(upTo: 4) }
            let b = (0..<random.next(upTo: 30)).map { _ in random.next(upTo: 4) }
            let pairs = LineMerge.matches(a, b)
            #expect(pairs.allSatisfy { a[$0.0] == b[$0.1] })
            #expect(zip(pairs, pairs.dropFirst()).allSatisfy { $0.0 < $1.0 && $0.1 < $1.1 })
            #expect(pairs.count == Self.longestCommonSubsequenceLength(a, b))
        }
    }

    /// The textbook dynamic-programming LCS length, to check the diff against.
    static func longestCommonSubsequenceLength(_ a: [Int], _ b: [Int]) -> Int {
        var row = [Int](repeating: 0, count: b.count + 1)
        for x in a {
            var diagonal = 0
            for (j, y) in b.enumerated() {
                let above = row[j + 1]
                row[j + 1] = x == y ? diagonal + 1 : max(row[j + 1], row[j])
                diagonal = above
            }
        }
        return row[b.count]
    }

    @Test func aHugeDifferenceStillMergesInsteadOfExhaustingMemory() {
        let base = (0..<3000).map { "base \($0)\n" }.joined()
        let ours = (0..<3000).map { "ours \($0)\n" }.joined()
        #expect(Self.merge(base, ours, base) == Self.clean(ours))
        #expect(Self.merge(base, base, ours) == Self.clean(ours))
        #expect(Self.merge(base, ours, ours) == Self.clean(ours))
    }

    // MARK: Properties over random edits

    @Test(arguments: 0..<8)
    func mergingWithAnUnchangedSideGivesTheChangedSide(seed: UInt64) {
        var random = SeededRandom(seed: 0xD1FF_3000 + seed)
        for _ in 0..<200 {
            let base = Self.randomText(&random)
            let x = Self.randomEdit(of: base, &random)
            #expect(Self.merge(base, x, base) == Self.clean(x), "base \(base.debugDescription), x \(x.debugDescription)")
            #expect(Self.merge(base, base, x) == Self.clean(x), "base \(base.debugDescription), x \(x.debugDescription)")
            #expect(Self.merge(base, x, x) == Self.clean(x), "base \(base.debugDescription), x \(x.debugDescription)")
            #expect(Self.merge(nil, x, x) == Self.clean(x))
        }
    }

    /// Lines drawn from a few, so that texts repeat lines; sometimes CRLF, sometimes no final newline.
    static let vocabulary = ["a", "b", "c", "", "d e", "a", "naïve ☕️", "x\r"]

    /// 0–12 random lines.
    static func randomText(_ random: inout SeededRandom) -> String {
        let lines = (0..<random.next(upTo: 13)).map { _ in vocabulary[random.next(upTo: vocabulary.count)] }
        return join(lines, finalNewline: random.next(upTo: 4) != 0)
    }

    /// `text` with 0–4 random line insertions, deletions and replacements, maybe a toggled final newline.
    static func randomEdit(of text: String, _ random: inout SeededRandom) -> String {
        var lines = LineMerge.lines(of: text).map { $0.hasSuffix("\n") ? String($0.dropLast()) : String($0) }
        var finalNewline = text.utf8.last == UInt8(ascii: "\n")
        for _ in 0..<random.next(upTo: 5) {
            let word = vocabulary[random.next(upTo: vocabulary.count)]
            switch random.next(upTo: 4) {
            case 0: lines.insert(word, at: random.next(upTo: lines.count + 1))
            case 1 where !lines.isEmpty: lines.remove(at: random.next(upTo: lines.count))
            case 2 where !lines.isEmpty: lines[random.next(upTo: lines.count)] = word
            default: finalNewline.toggle()
            }
        }
        return join(lines, finalNewline: finalNewline)
    }

    /// `lines` joined by "\n", with one after the last if `finalNewline`.
    static func join(_ lines: [String], finalNewline: Bool) -> String {
        lines.joined(separator: "\n") + (finalNewline && !lines.isEmpty ? "\n" : "")
    }
}

extension SeededRandom {
    /// A number in `0..<bound` (bound > 0).
    mutating func next(upTo bound: UInt64) -> UInt64 { next() % bound }

    /// A number in `0..<bound` (bound > 0) as an Int.
    mutating func next(upTo bound: Int) -> Int { Int(next() % UInt64(bound)) }
}
