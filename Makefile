# DocumentKit: the two commands of the README's Quick start, and a few more.
SHELL := /bin/bash
SWIFT ?= swift
# Tests and the demo share one debug build.
BUILD_FLAGS ?=

.PHONY: demo test test-young-clock build bench soak docs clean bootstrap

## make demo: install what is missing, build, run the notes tour on a temporary library.
demo:
	@Scripts/bootstrap.sh demo
	$(SWIFT) build $(BUILD_FLAGS) --product notes
	$(SWIFT) run $(BUILD_FLAGS) --skip-build notes tour

## make test: install what is missing, build everything (warnings are errors), run the whole suite.
## Tests run one at a time: several spawn processes and measure who waits for whom, which
## needs the two cores of a CI machine to themselves.
test:
	@Scripts/bootstrap.sh test
	@Scripts/test-python.sh >/dev/null
	$(SWIFT) build $(BUILD_FLAGS) --build-tests
	$(SWIFT) test $(BUILD_FLAGS) --skip-build --no-parallel 2>&1 | tee .build/test.log; \
	status=$${PIPESTATUS[0]}; \
	if [ $$status -ne 0 ]; then \
		echo "== what failed (from .build/test.log) =="; \
		grep -E '✘|Fatal error|unexpected signal' .build/test.log | tail -n 40; \
	fi; \
	exit $$status

## make test-young-clock: the tests that read the monotonic clock, in a time namespace where the
## machine booted a minute ago (needs util-linux's unshare; root, or unprivileged user namespaces).
test-young-clock:
	@Scripts/bootstrap.sh demo
	$(SWIFT) build $(BUILD_FLAGS) --build-tests
	SWIFT="$(SWIFT)" BUILD_FLAGS="$(BUILD_FLAGS)" Scripts/test-young-clock.sh

build:
	@Scripts/bootstrap.sh demo
	$(SWIFT) build $(BUILD_FLAGS)

## make bench: the benchmarks, in release mode (not part of the tests).
bench:
	@Scripts/bootstrap.sh bench
	$(SWIFT) run -c release docbench all

## make soak: `notes serve` under 100,000 requests over 1,000 notes with CLI and shell edits beside
## them (release build; minutes; not part of `make test`). Fails on a 5xx, a lost acknowledged write,
## memory growth over 10% after warm-up, or descriptors and threads that don't come back.
soak:
	@Scripts/bootstrap.sh demo
	$(SWIFT) build -c release --product notes
	python3 Scripts/soak.py --notes-binary "$$($(SWIFT) build -c release --show-bin-path)/notes"

## make docs: the DocC catalog of DocumentKit and the modules it re-exports, combined into one
## archive in .build/docs (a link to another module's symbol names it: ``FilePackages/FileWrapper``),
## failing on any warning, an unresolved link included. Only this target fetches swift-docc-plugin.
DOCS_TARGETS := DocumentKitSystem FilePackages DocumentArchive FileCoordination FormatVersioning FileVersions DocumentIndexing DocumentKit
docs:
	@Scripts/bootstrap.sh docs
	@mkdir -p .build
	DOCUMENTKIT_DOCS=1 $(SWIFT) package $(BUILD_FLAGS) --allow-writing-to-directory .build/docs \
		generate-documentation $(DOCS_TARGETS:%=--target %) --enable-experimental-combined-documentation \
		--warnings-as-errors --output-path .build/docs 2>&1 \
		| tee .build/docs.log; \
	status=$${PIPESTATUS[0]}; \
	if [ $$status -eq 0 ] && grep -E '^(warning|error):|: (warning|error):' .build/docs.log >/dev/null; then \
		echo "error: the documentation build printed warnings (see above)"; status=1; \
	fi; \
	exit $$status

bootstrap:
	@Scripts/bootstrap.sh test

clean:
	rm -rf .build
