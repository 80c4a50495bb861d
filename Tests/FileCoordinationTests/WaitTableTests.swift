// The table of issue #3 across real processes: a first process holds op1 on one item, a second
// asks for op2 on another; does the second wait for the first?
//
// Apple's rules: the same item, or two members of one package (a package is one unit), wait
// unless both read; an item inside a plain folder waits for a delete, move or replace of the
// folder (ancestor), and a delete, move or replace of a folder waits for coordinations of items
// inside it (descendant); siblings never wait.
//
// How a row is decided: the first child holds until told to release; once it reported `granted`,
// the second child starts; if the second reports `granted` within 500 ms of reporting `started`,
// it did not wait; else the first is released. Either way the verdict is read from the children's
// own CLOCK_MONOTONIC times: waited ⇔ second granted ≥ first released.

import DocumentKit
import DocumentKitTesting
import Foundation
import Testing

enum AccessKind: String, CaseIterable, Sendable, CustomStringConvertible {
    case read, write, delete, move, replace
    var description: String { rawValue }
    /// Whether it locks a folder's whole subtree (forDeleting, forMoving, forReplacing).
    var scopesSubtree: Bool { self == .delete || self == .move || self == .replace }
}

enum Relation: String, CaseIterable, Sendable, CustomStringConvertible {
    /// Both on `item`.
    case sameItem
    /// `Doc.pkg/a.txt`, then `Doc.pkg/b.txt`.
    case samePackage
    /// The first on the plain folder `D`, the second on `D/f`.
    case ancestor
    /// The first on `D/f`, the second on `D`.
    case descendant
    /// `D/a`, then `D/b`.
    case sibling

    var description: String { rawValue }

    /// The two paths (relative to the item folder) after creating them.
    func setUp(in fixture: Fixture) throws -> (first: String, second: String) {
        switch self {
        case .sameItem:
            try fixture.makeFile("item")
            return ("item", "item")
        case .samePackage:
            try fixture.makeFile("Doc.pkg/a.txt")
            try fixture.makeFile("Doc.pkg/b.txt")
            return ("Doc.pkg/a.txt", "Doc.pkg/b.txt")
        case .ancestor:
            try fixture.makeFile("D/f")
            return ("D", "D/f")
        case .descendant:
            try fixture.makeFile("D/f")
            return ("D/f", "D")
        case .sibling:
            try fixture.makeFile("D/a")
            try fixture.makeFile("D/b")
            return ("D/a", "D/b")
        }
    }

    /// Whether the second coordination must wait for the first.
    func secondWaits(first: AccessKind, second: AccessKind) -> Bool {
        switch self {
        case .sameItem, .samePackage: !(first == .read && second == .read)
        case .ancestor: first.scopesSubtree
        case .descendant: second.scopesSubtree
        case .sibling: false
        }
    }
}

/// Bounds how many rows (each two child processes) run at once, across all the table's tests.
actor ProcessSlots {
    static let table = ProcessSlots(8)

    private var free: Int
    private var waiting: [CheckedContinuation<Void, Never>] = []

    init(_ count: Int) { free = count }

    func acquire() async {
        if free > 0 {
            free -= 1
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    func release() {
        if waiting.isEmpty { free += 1 } else { waiting.removeFirst().resume() }
    }

    func run<T: Sendable>(_ body: @Sendable () async throws -> T) async rethrows -> T {
        await acquire()
        do {
            let result = try await body()
            release()
            return result
        } catch {
            release()
            throw error
        }
    }
}

@Suite("Who waits for whom, across processes")
struct WaitTableTests {
    struct Outcome: Sendable {
        var first: AccessKind
        var second: AccessKind
        var waited: Bool?
        var problem: String?
        /// From the first's release to the second's grant, when the second waited.
        var handOver: UInt64?
    }

    @Test("op1 × op2 on two items in one relation: the second waits exactly when Apple's rules say", arguments: Relation.allCases)
    func table(relation: Relation) async throws {
        let pairs = AccessKind.allCases.flatMap { first in AccessKind.allCases.map { (first, $0) } }
        let outcomes = await withTaskGroup(of: Outcome.self) { group in
            for (first, second) in pairs {
                group.addTask { await ProcessSlots.table.run { await Self.row(relation, first, second) } }
            }
            var outcomes: [Outcome] = []
            for await outcome in group { outcomes.append(outcome) }
            return outcomes
        }
        for outcome in outcomes.sorted(by: { ($0.first.rawValue, $0.second.rawValue) < ($1.first.rawValue, $1.second.rawValue) }) {
            let row = "\(outcome.first) then \(outcome.second), \(relation)"
            if let problem = outcome.problem {
                Issue.record("\(row): \(problem)")
                continue
            }
            let expected = relation.secondWaits(first: outcome.first, second: outcome.second)
            #expect(outcome.waited == expected, "\(row): expected \(expected ? "a wait" : "no wait")")
            if let handOver = outcome.handOver {
                #expect(handOver < 500_000_000, "\(row): granted \(handOver / 1_000_000) ms after the release")
            }
        }
        #expect(outcomes.count == 25)
    }

    /// Runs one row in folders of its own.
    static func row(_ relation: Relation, _ firstOperation: AccessKind, _ secondOperation: AccessKind) async -> Outcome {
        var outcome = Outcome(first: firstOperation, second: secondOperation)
        do {
            let fixture = try Fixture()
            let (firstPath, secondPath) = try relation.setUp(in: fixture)
            let first = try fixture.hold(firstOperation.rawValue, fixture.url(firstPath).path, milliseconds: 30_000)
            guard await first.wait(for: "granted", timeout: .seconds(20)) != nil else {
                outcome.problem = "the first child was not granted: \(first.errorOutput)"
                return outcome
            }
            let second = try fixture.hold(secondOperation.rawValue, fixture.url(secondPath).path, milliseconds: 0)
            guard await second.wait(for: "started", timeout: .seconds(20)) != nil else {
                outcome.problem = "the second child did not start: \(second.errorOutput)"
                return outcome
            }
            _ = await second.wait(for: "granted", timeout: .milliseconds(500))
            first.release()
            let firstStatus = await first.exitStatus(timeout: .seconds(20))
            let secondStatus = await second.exitStatus(timeout: .seconds(20))
            guard firstStatus == 0, secondStatus == 0, let released = first.time("released"), let granted = second.time("granted")
            else {
                outcome.problem = "children failed (\(String(describing: firstStatus)), \(String(describing: secondStatus))): \(first.errorOutput) \(second.errorOutput)"
                return outcome
            }
            outcome.waited = granted >= released
            if granted >= released { outcome.handOver = granted - released }
        } catch {
            outcome.problem = "\(error)"
        }
        return outcome
    }
}
