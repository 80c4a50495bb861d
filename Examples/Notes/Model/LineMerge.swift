/// A line-based three-way merge of note bodies.
///
/// A line is everything up to and including a "\n"; the last line may lack one. Lines compare
/// byte for byte: no CRLF or Unicode normalisation, so "\r\n" stays "\r\n". Because the final
/// newline belongs to the last line, a clean merge keeps it (or its absence) exactly as the side
/// that changed it, or as both sides had it.
///
/// The merge is diff3's: base→ours and base→theirs are diffed (Myers); lines both diffs keep are
/// stable, and each stretch between them is taken from the side that changed it, once when both
/// made the same change, and otherwise marked as a clash showing both sides, as git does:
///
///     <<<<<<< current
///     our lines
///     =======
///     their lines
///     >>>>>>> conflict
///
/// Marker lines end with "\n", and so does a side's last line inside a clash.
enum LineMerge {
    /// A merged text, and how many clashes it marks.
    struct Result: Equatable {
        /// The merged body, with a marked block per clash.
        var text: String
        /// The number of marked clashes; 0 for a clean merge.
        var conflictCount: Int
    }

    /// How many clash blocks `text` holds (lines starting with `<<<<<<< `).
    static func clashCount(in text: String) -> Int {
        text.split(separator: "\n", omittingEmptySubsequences: false).filter { $0.hasPrefix("<<<<<<< ") }.count
    }

    /// Merges `ours` and `theirs`, both changed from `base` (nil when the common ancestor is unknown: then treat as a two-way merge where every differing region is a clash).
    static func merge(
        base: String?, ours: String, theirs: String, oursLabel: String = "current", theirsLabel: String = "conflict"
    ) -> Result {
        var table = LineTable()
        let ourLines = lines(of: ours), theirLines = lines(of: theirs)
        let ourIDs = table.ids(ourLines), theirIDs = table.ids(theirLines)
        var output = Output(oursLabel: oursLabel, theirsLabel: theirsLabel)

        guard let base else {
            // Two-way: the lines both keep are stable; everything between them clashes.
            var j = 0, k = 0
            for (ourIndex, theirIndex) in matches(ourIDs, theirIDs) + [(ourIDs.count, theirIDs.count)] {
                if j < ourIndex || k < theirIndex {
                    output.clash(ours: ourLines[j..<ourIndex], theirs: theirLines[k..<theirIndex])
                }
                if ourIndex < ourLines.count { output.take(ourLines[ourIndex..<ourIndex + 1]) }
                j = ourIndex + 1
                k = theirIndex + 1
            }
            return output.result
        }

        let baseIDs = table.ids(lines(of: base))
        // For each base line, where it is in ours and in theirs (nil: changed there).
        var inOurs = [Int?](repeating: nil, count: baseIDs.count)
        var inTheirs = [Int?](repeating: nil, count: baseIDs.count)
        for (b, o) in matches(baseIDs, ourIDs) { inOurs[b] = o }
        for (b, t) in matches(baseIDs, theirIDs) { inTheirs[b] = t }

        var i = 0, j = 0, k = 0  // positions in base, ours, theirs
        while true {
            // The stable run: base lines at the current place on both sides.
            let runStart = j
            while i < baseIDs.count, inOurs[i] == j, inTheirs[i] == k {
                i += 1
                j += 1
                k += 1
            }
            output.take(ourLines[runStart..<j])
            if i == baseIDs.count, j == ourIDs.count, k == theirIDs.count { break }

            // The next base line both sides keep ends the unstable stretch.
            let next = (i..<baseIDs.count).first { inOurs[$0] != nil && inTheirs[$0] != nil }
            let (nextBase, nextOurs, nextTheirs) =
                next.map { ($0, inOurs[$0]!, inTheirs[$0]!) } ?? (baseIDs.count, ourIDs.count, theirIDs.count)
            let baseChunk = baseIDs[i..<nextBase]
            let ourChunk = ourIDs[j..<nextOurs], theirChunk = theirIDs[k..<nextTheirs]
            if ourChunk.elementsEqual(baseChunk) {
                output.take(theirLines[k..<nextTheirs])
            } else if theirChunk.elementsEqual(baseChunk) || ourChunk.elementsEqual(theirChunk) {
                output.take(ourLines[j..<nextOurs])
            } else {
                output.clash(ours: ourLines[j..<nextOurs], theirs: theirLines[k..<nextTheirs])
            }
            (i, j, k) = (nextBase, nextOurs, nextTheirs)
        }
        return output.result
    }

    /// The lines of `text`, each with its "\n" (the last may have none); none for "".
    static func lines(of text: String) -> [Substring] {
        var result: [Substring] = []
        var start = text.startIndex
        let utf8 = text.utf8
        for index in utf8.indices where utf8[index] == UInt8(ascii: "\n") {
            // Just after a line feed is always a character boundary.
            let end = utf8.index(after: index)
            result.append(text[start..<end])
            start = end
        }
        if start < text.endIndex { result.append(text[start...]) }
        return result
    }

    /// Numbers distinct lines (by their UTF-8 bytes), so diffs compare integers.
    private struct LineTable {
        /// The number given to each distinct line seen so far.
        private var numbers: [[UInt8]: Int] = [:]

        /// The number of each of `lines`.
        mutating func ids(_ lines: [Substring]) -> [Int] {
            lines.map { line in
                let bytes = Array(line.utf8)
                if let number = numbers[bytes] { return number }
                numbers[bytes] = numbers.count
                return numbers.count - 1
            }
        }
    }

    /// Builds the merged text.
    private struct Output {
        /// The label after "<<<<<<< ".
        let oursLabel: String
        /// The label after ">>>>>>> ".
        let theirsLabel: String
        /// The text so far.
        private(set) var text = ""
        /// The clashes so far.
        private(set) var conflictCount = 0

        /// A marker output for `oursLabel` and `theirsLabel`.
        init(oursLabel: String, theirsLabel: String) {
            self.oursLabel = oursLabel
            self.theirsLabel = theirsLabel
        }

        /// The merge's result.
        var result: Result { Result(text: text, conflictCount: conflictCount) }

        /// Appends `lines` as they are.
        mutating func take(_ lines: ArraySlice<Substring>) {
            for line in lines { text.append(contentsOf: line) }
        }

        /// Appends a marked clash between `ours` and `theirs`.
        mutating func clash(ours: ArraySlice<Substring>, theirs: ArraySlice<Substring>) {
            conflictCount += 1
            text += "<<<<<<< \(oursLabel)\n"
            takeTerminated(ours)
            text += "=======\n"
            takeTerminated(theirs)
            text += ">>>>>>> \(theirsLabel)\n"
        }

        /// Appends `lines`, ending the last with "\n" if it has none.
        private mutating func takeTerminated(_ lines: ArraySlice<Substring>) {
            take(lines)
            if let last = lines.last, last.utf8.last != UInt8(ascii: "\n") { text += "\n" }
        }
    }

    /// The most differences ``matches(_:_:)`` looks for before giving up on the middle (its memory grows as their square).
    static let maximumDifferences = 2000

    /// The pairs of indices of equal elements of a longest common subsequence of `a` and `b`, in
    /// increasing order (Myers' O((N+M)·D) diff, after the common prefix and suffix). Past
    /// ``maximumDifferences`` differences, the middle is taken as wholly replaced.
    static func matches(_ a: [Int], _ b: [Int]) -> [(Int, Int)] {
        var prefix = 0
        while prefix < a.count, prefix < b.count, a[prefix] == b[prefix] { prefix += 1 }
        var suffix = 0
        while suffix < a.count - prefix, suffix < b.count - prefix, a[a.count - 1 - suffix] == b[b.count - 1 - suffix] {
            suffix += 1
        }
        let middle = myers(Array(a[prefix..<a.count - suffix]), Array(b[prefix..<b.count - suffix])) ?? []
        return (0..<prefix).map { ($0, $0) }
            + middle.map { ($0.0 + prefix, $0.1 + prefix) }
            + (0..<suffix).map { (a.count - suffix + $0, b.count - suffix + $0) }
    }

    /// Myers' greedy diff of `a` and `b`: the matched index pairs in increasing order, or nil past
    /// ``maximumDifferences`` differences.
    private static func myers(_ a: [Int], _ b: [Int]) -> [(Int, Int)]? {
        let n = a.count, m = b.count
        if n == 0 || m == 0 { return [] }
        let limit = min(n + m, maximumDifferences)
        let offset = limit + 1
        var v = [Int](repeating: 0, count: 2 * limit + 3)  // furthest x on each diagonal k, at v[k + offset]
        var trace: [[Int]] = []  // trace[d]: v[-d...d] before step d
        var found = false
        search: for d in 0...limit {
            trace.append(Array(v[(offset - d)...(offset + d)]))
            for k in stride(from: -d, through: d, by: 2) {
                var x = k == -d || (k != d && v[offset + k - 1] < v[offset + k + 1]) ? v[offset + k + 1] : v[offset + k - 1] + 1
                var y = x - k
                while x < n, y < m, a[x] == b[y] {
                    x += 1
                    y += 1
                }
                v[offset + k] = x
                if x >= n, y >= m {
                    found = true
                    break search
                }
            }
        }
        guard found else { return nil }

        // Walk back from (n, m), step by step, collecting the diagonal (matching) moves.
        var pairs: [(Int, Int)] = []
        var x = n, y = m
        for d in stride(from: trace.count - 1, through: 0, by: -1) {
            let k = x - y
            let previousX: Int, previousY: Int
            if d == 0 {
                (previousX, previousY) = (0, 0)
            } else {
                let before = trace[d]  // v[-d...d] after step d - 1, at before[k + d]
                let previousK = k == -d || (k != d && before[k - 1 + d] < before[k + 1 + d]) ? k + 1 : k - 1
                previousX = before[previousK + d]
                previousY = previousX - previousK
            }
            // The snake into (x, y) starts just after the move from (previousX, previousY).
            while x > previousX, y > previousY {
                pairs.append((x - 1, y - 1))
                x -= 1
                y -= 1
            }
            (x, y) = (previousX, previousY)
        }
        return pairs.reversed()
    }
}
