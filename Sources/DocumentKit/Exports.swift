// `import DocumentKit` is all an app needs: the layers below are re-exported.
@_exported import DocumentKitSystem
@_exported import FileCoordination
@_exported import FilePackages
@_exported import DocumentArchive
@_exported import FormatVersioning
@_exported import SystemPackage
@_exported import FileVersions
@_exported import DocumentIndexing
