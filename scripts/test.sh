#!/bin/sh
# `npm test`: what the tests need (test-setup.sh), then typecheck, lint and the whole vitest
# suite, in that order, stopping at the first that fails. Its last line is the wall time of all
# of it, so a newcomer knows what to expect (about 10 minutes on a busy 2-core machine).
# Arguments go to vitest: `npm test -- test/chain` runs one folder after typecheck and lint.
start=$(date +%s)
sh scripts/test-setup.sh && npm run --silent typecheck && npm run --silent lint && vitest run "$@"
status=$?
elapsed=$(($(date +%s) - start))
echo "npm test: $((elapsed / 60)) min $((elapsed % 60)) s in all ($([ "$status" = 0 ] && echo passed || echo "failed, exit $status"))"
exit "$status"
