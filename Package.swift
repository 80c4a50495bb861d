// swift-tools-version:6.2
import PackageDescription

let package = Package(
    name: "DocumentKit",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "DocumentKit", targets: ["DocumentKit"]),
        .library(name: "DocumentKitTesting", targets: ["DocumentKitTesting"]),
        .executable(name: "notes", targets: ["notes"]),
        .executable(name: "docbench", targets: ["docbench"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-system", from: "1.8.1"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        // SQLite, for the per-machine caches: the library index and member digests.
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        // HTTP, for `notes serve` (default traits off: no swift-configuration).
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: []),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
    ],
    targets: [
        // C shims for the calls Glibc's Swift overlay lacks (renameat2, syncfs, O_TMPFILE...).
        .target(name: "CDocumentKitShims"),
        // libarchive, found through pkg-config; the archive layer builds on it.
        .systemLibrary(
            name: "CArchive",
            pkgConfig: "libarchive",
            providers: [.apt(["libarchive-dev"]), .brew(["libarchive"])]
        ),
        // zlib, found through pkg-config: the DEFLATE streams of single-file (zip) documents.
        .systemLibrary(
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"]), .brew(["zlib"])]
        ),
        // OpenSSL's libcrypto, found through pkg-config: SHA-256 of package members.
        .systemLibrary(
            name: "CLibCrypto",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"]), .brew(["openssl@3"])]
        ),
        // Layer 0: system calls behind one seam, errors, file identity.
        .target(
            name: "DocumentKitSystem",
            dependencies: [
                "CDocumentKitShims",
                .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Layer 1: coordinated access across threads and processes.
        .target(
            name: "FileCoordination",
            dependencies: [
                "DocumentKitSystem", "CDocumentKitShims",
                .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Layer 1: the file-tree model and atomic saves of files and packages.
        .target(
            name: "FilePackages",
            dependencies: [
                "DocumentKitSystem",
                .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Layer 1: archives through libarchive.
        .target(
            name: "DocumentArchive",
            dependencies: [
                "CArchive", "CZlib", "DocumentKitSystem", "FileCoordination", "FilePackages",
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        // Layer 2: the manifest, format versions and features, migrations, member hashes.
        .target(name: "FormatVersioning", dependencies: ["DocumentKitSystem", "FilePackages", "CLibCrypto"]),
        // Layer 3: the version store: previous and conflict versions, adopted sync-engine copies.
        .target(
            name: "FileVersions",
            dependencies: [
                "DocumentKitSystem", "FileCoordination", "FilePackages", "FormatVersioning", "CLibCrypto",
                .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Layer 4: the live, persisted index of a library of documents, and the per-machine
        // cache of member digests (SQLite through GRDB).
        .target(
            name: "DocumentIndexing",
            dependencies: [
                "DocumentKitSystem", "FileCoordination", "FilePackages", "FormatVersioning", "FileVersions",
                "CDocumentKitShims",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Top layer: Document. `import DocumentKit` is all an app needs.
        .target(
            name: "DocumentKit",
            dependencies: [
                "DocumentKitSystem", "FileCoordination", "FilePackages", "DocumentArchive", "FormatVersioning", "FileVersions",
                "DocumentIndexing",
                .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Helpers for app developers' tests: fault injection, temporary folders.
        .target(
            name: "DocumentKitTesting",
            dependencies: ["DocumentKit", .product(name: "SystemPackage", package: "swift-system")]
        ),

        // The example app.
        .executableTarget(
            name: "notes",
            dependencies: [
                "DocumentKit", "CArchive", "CDocumentKitShims",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Examples/Notes"
        ),
        // Benchmarks (not tests): `swift run -c release docbench save`.
        .executableTarget(
            name: "docbench",
            dependencies: ["DocumentKit", "DocumentKitTesting", "CDocumentKitShims"],
            path: "Benchmarks/DocBench"
        ),
        // A child process for the crash test: saves a package in a loop until killed.
        .executableTarget(
            name: "dk-crash-child",
            dependencies: ["DocumentKit", "DocumentKitTesting", "CrashTestSupport"],
            path: "Tests/CrashChild"
        ),
        // A child process for the coordination tests: takes a coordination, reports, holds it.
        .executableTarget(
            name: "dk-coordination-child",
            dependencies: ["DocumentKit", "RaceTestSupport"],
            path: "Tests/CoordinationChild"
        ),
        // A child process for the digest cache tests: verifies packages, recording digests.
        .executableTarget(name: "dk-digest-child", dependencies: ["DocumentKit"], path: "Tests/DigestChild"),
        // The document two processes race to save (the child and ConcurrentVersionedSaveTests).
        .target(name: "RaceTestSupport", dependencies: ["DocumentKit"], path: "Tests/RaceTestSupport"),
        // The states the crash child saves and the crash test checks.
        .target(name: "CrashTestSupport", path: "Tests/CrashTestSupport"),
        // A child process for the index tests: writes notes and tells its persisted index, until killed.
        .executableTarget(name: "dk-index-child", dependencies: ["DocumentKit"], path: "Tests/IndexChild"),

        .testTarget(
            name: "FilePackagesTests",
            dependencies: ["DocumentKit", "FilePackages", "DocumentKitTesting"]
        ),
        .testTarget(
            name: "DocumentKitTests",
            dependencies: ["DocumentKit", "DocumentKitTesting", "CrashTestSupport", "dk-crash-child"]
        ),
        .testTarget(
            name: "FileCoordinationTests",
            dependencies: [
                "DocumentKit", "FileCoordination", "DocumentKitTesting", "dk-coordination-child", "RaceTestSupport",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "FormatVersioningTests",
            dependencies: ["FormatVersioning", "DocumentKitTesting"]
        ),
        .testTarget(
            name: "FileVersionsTests",
            dependencies: ["DocumentKit", "FileVersions", "DocumentKitTesting"]
        ),
        .testTarget(
            name: "DocumentIndexingTests",
            // `notes`: the live tests change a library with real notes processes.
            dependencies: ["DocumentKit", "DocumentIndexing", "DocumentKitTesting", "dk-index-child", "dk-digest-child", "notes"]
        ),
        .testTarget(
            name: "DocumentArchiveTests",
            dependencies: ["DocumentArchive", "DocumentKit", "DocumentKitTesting", "CArchive"]
        ),
        .testTarget(
            name: "NotesTests",
            dependencies: ["DocumentKitTesting", "notes", "dk-coordination-child"],
            exclude: ["Server/Chromium/cdp_driver.py"]
        ),
    ]
)

// The DocC plugin, for `make docs` only (it sets DOCUMENTKIT_DOCS=1): `make test` and CI neither
// fetch nor build it.
if Context.environment["DOCUMENTKIT_DOCS"] != nil {
    package.dependencies.append(.package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"))
}

// Strict settings for every Swift target, in one place.
for target in package.targets where target.type != .system {
    guard target.name != "CDocumentKitShims" else { continue }
    var settings = target.swiftSettings ?? []
    settings.append(.swiftLanguageMode(.v6))
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    settings.append(.enableUpcomingFeature("MemberImportVisibility"))
    settings.append(.treatAllWarnings(as: .error))
    target.swiftSettings = settings
}
