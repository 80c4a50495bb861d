#!/usr/bin/env bash
# Installs the system packages DocumentKit needs to build and test, or says exactly what to install.
# Usage: Scripts/bootstrap.sh [demo|test|docs]
set -euo pipefail
purpose="${1:-demo}"

missing=()
have_pkgconfig() { command -v pkg-config >/dev/null 2>&1 && pkg-config --exists "$1"; }
command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)
have_pkgconfig libarchive || missing+=(libarchive-dev)
have_pkgconfig zlib || missing+=(zlib1g-dev)
# OpenSSL's libcrypto: SHA-256 of package members (FormatVersioning).
have_pkgconfig libcrypto || missing+=(libssl-dev)
# SQLite: the per-machine caches (the library index, member digests), through GRDB.
have_pkgconfig sqlite3 || missing+=(libsqlite3-dev)
# Packages only the tests need: syncthing for the sync-engine conflict tests (a real pair on loopback);
# for the archive interoperability tests (Tests/DocumentArchiveTests/ArchiveInteroperabilityTests.swift),
# the other tools that make and check archives: bsdtar (libarchive-tools), Info-ZIP's zip and unzip,
# Python's zipfile (python3), and the zstd and xz programs GNU tar calls for --zstd and -J.
# For `notes serve`'s tests: Debian's chromium (the web page, headless), python3-venv (schemathesis,
# from PyPI, in a virtual environment under .build: see Scripts/test-python.sh).
test_packages=(syncthing libarchive-tools zip unzip python3 zstd xz-utils chromium python3-venv)
# For `make bench`: wrk, the HTTP load generator of the server benchmark.
if [ "$purpose" = bench ] && ! command -v wrk >/dev/null 2>&1; then missing+=(wrk); fi
if [ "$purpose" = test ]; then
    for package in "${test_packages[@]}"; do
        dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
    done
fi

# A second local user for the per-user state tests (Tests/NotesTests/PerUserStateTests.swift): the
# neighbour who pre-creates, locks or reads another user's folders. Created when root; otherwise
# those tests are disabled (with the reason) until it exists.
test_user=dk-neighbour
if [ "$purpose" = test ] && ! id "$test_user" >/dev/null 2>&1; then
    if [ "$(id -u)" -eq 0 ] && command -v useradd >/dev/null 2>&1; then
        if useradd --system --no-create-home --shell /usr/sbin/nologin "$test_user"; then
            echo "Created the test user $test_user"
        else
            echo "note: could not create the test user $test_user: the per-user state tests are disabled" >&2
        fi
    else
        echo "note: the per-user state tests need a second user; create it with:" >&2
        echo "  sudo useradd --system --no-create-home --shell /usr/sbin/nologin $test_user" >&2
    fi
fi

if ! command -v swift >/dev/null 2>&1; then
    echo "error: the Swift toolchain (6.2 or newer) is not on PATH; install it from swift.org first." >&2
    exit 69
fi

# make docs: DocC comes with the toolchain (swift-docc-plugin, fetched by SwiftPM, runs it).
if [ "$purpose" = docs ] && ! command -v docc >/dev/null 2>&1 \
    && [ ! -x "$(dirname "$(readlink -f "$(command -v swift)")")/docc" ]; then
    echo "error: docc is not in the Swift toolchain; install a toolchain from swift.org that has it." >&2
    exit 69
fi

if [ ${#missing[@]} -eq 0 ]; then
    exit 0
fi

if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "Installing missing system packages: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    echo "Installed: ${missing[*]}"
else
    echo "error: missing system packages: ${missing[*]}" >&2
    echo "Install them with:  sudo apt-get install ${missing[*]}" >&2
    exit 69
fi
