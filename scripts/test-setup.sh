#!/bin/sh
# What `npm test` needs besides node_modules, set up before it runs (and so for .ci/run, which
# runs `npm test`): Debian's Chromium at /usr/bin/chromium, which the diagram export's render
# check and the run viewer's end-to-end test drive through playwright-core
# (test/support/chromium.ts).
#
# - Chromium there: nothing to do (a file test, milliseconds).
# - Missing: installed with apt-get, as root or through `sudo -n` (never a password prompt),
#   each apt-get step bounded by `timeout`, so this never hangs.
# - Missing and not installable here (no apt-get, not root and no password-free sudo, no
#   `timeout`, or the install failed): one line on stderr says how to install it, and the tests
#   go on; the browser tests then fail with launchChromium's message.
# It always exits 0 and writes no files of its own.
#
# STATECRAFT_TEST_SETUP_CHROMIUM replaces /usr/bin/chromium, for this script's own tests only
# (test/cli/test-setup.test.ts): the browser tests look at /usr/bin/chromium.

chromium=${STATECRAFT_TEST_SETUP_CHROMIUM:-/usr/bin/chromium}
[ -x "$chromium" ] && exit 0

how="install Debian's chromium (sudo apt-get install chromium), or the browser tests fail"
say() {
  echo "test-setup: $chromium is missing$1: $how" >&2
  exit 0
}

command -v apt-get >/dev/null 2>&1 || say " and there is no apt-get here"
command -v timeout >/dev/null 2>&1 || say " and there is no timeout command to bound apt-get with"
if [ "$(id -u)" = 0 ]; then
  as=
elif command -v sudo >/dev/null 2>&1 && sudo -n true >/dev/null 2>&1; then
  as="sudo -n"
else
  say " and this user may not install it (not root, no password-free sudo)"
fi

echo "test-setup: $chromium is missing: installing Debian's chromium (${as:+$as }apt-get install chromium)" >&2
# `timeout` ends apt-get (or sudo, which hands the signal on) after the given seconds, and kills
# it 10 s later if it is still there. --foreground keeps apt-get in the terminal's process group,
# so a Ctrl-C of `npm test` reaches it too instead of leaving it holding the dpkg lock.
if timeout --foreground -k 10 120 $as env DEBIAN_FRONTEND=noninteractive apt-get update -q &&
  timeout --foreground -k 10 900 $as env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -q --no-install-recommends chromium; then
  [ -x "$chromium" ] && exit 0
  say " after apt-get installed chromium"
fi
say " (apt-get failed or timed out)"
