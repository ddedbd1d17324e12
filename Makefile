# The main job in two commands:
#   make demo   sets up what is missing, builds the `trove` tool, indexes the sample notes in
#               samples/notes into a demo database and runs a few searches to judge by eye.
#   make test   runs the test suite (the README's test command; .ci/run runs the same).
#   make format rewrites Sources and Tests in the repository's style (.swift-format); .ci/run
#               fails on what `make lint` reports.

SWIFT    ?= swift
# SwiftPM links .build/release to the platform's release folder.
TROVE    := $(CURDIR)/.build/release/trove
DEMO_DIR ?= $(CURDIR)/.build/demo
DEMO_DB  ?= $(DEMO_DIR)/demo.sqlite
SEARCH   := $(TROVE) search --db $(DEMO_DB) -k 3

.PHONY: demo demo-build demo-search test clean-demo format lint

demo: demo-build
	@mkdir -p $(DEMO_DIR)
	@echo
	@echo "== trove index samples/notes   (database: $(DEMO_DB))"
	@$(TROVE) index --db $(DEMO_DB) samples/notes
	@$(MAKE) --no-print-directory demo-search

demo-build:
	bash scripts/setup.sh
	$(SWIFT) build -c release --product trove

demo-search:
	@echo
	@echo "== Questions in your own words"
	@echo
	@echo '$$ trove search "how do I stop the dripping tap in the bathroom"'
	@$(SEARCH) "how do I stop the dripping tap in the bathroom"
	@echo
	@echo '$$ trove search "when do I see the dentist next"'
	@$(SEARCH) "when do I see the dentist next"
	@echo
	@echo '$$ trove search "what did we decide about hiring outside help for the data move"'
	@$(SEARCH) "what did we decide about hiring outside help for the data move"
	@echo
	@echo '$$ trove search "present for grandmother turning eighty"'
	@$(SEARCH) "present for grandmother turning eighty"
	@echo
	@echo '$$ trove search "practicar idiomas"   (Spanish: practise languages)'
	@$(SEARCH) "practicar idiomas"
	@echo
	@echo "== Words: names and codes"
	@echo
	@echo '$$ trove search --mode text "Pena Palace"'
	@$(SEARCH) --mode text "Pena Palace"
	@echo
	@echo '$$ trove search "MERV 8 filter size"'
	@$(SEARCH) "MERV 8 filter size"
	@echo
	@echo "== Filters: only notes written on the phone"
	@echo
	@echo '$$ trove search --source phone "who can fix pipes"'
	@$(SEARCH) --source phone "who can fix pipes"
	@echo
	@echo '$$ trove stats'
	@$(TROVE) stats --db $(DEMO_DB)

test:
	$(SWIFT) test

clean-demo:
	rm -rf $(DEMO_DIR)

format:
	$(SWIFT) format format --in-place --recursive --parallel Sources Tests

lint:
	$(SWIFT) format lint --strict --recursive --parallel Sources Tests
