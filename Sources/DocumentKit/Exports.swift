@_exported import FilePackages
