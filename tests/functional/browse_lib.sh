# browse PAGE NAME: load an ergon report page in headless Chromium with the
# network disabled (sourced by tests after run_lib.sh; needs $TMP and
# $SHOTS): --dump-dom to $TMP/NAME.dom, console to $TMP/NAME.log, a
# screenshot to $SHOTS/NAME.png; the page's self-check must log ok and no
# console error may appear.
browse() { # browse PAGE NAME
  local flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run
    --disable-background-networking --disable-component-update --disable-sync
    --proxy-server=127.0.0.1:9 --host-resolver-rules="MAP * ~NOTFOUND"
    --virtual-time-budget=5000 --enable-logging=stderr --v=0)
  timeout 120 chromium "${flags[@]}" --user-data-dir="$(mktemp -d "$TMP/chr-XXXXXX")" \
    --dump-dom "file://$1" >"$TMP/$2.dom" 2>"$TMP/$2.log" || bad "$2: chromium --dump-dom failed"
  timeout 120 chromium "${flags[@]}" --user-data-dir="$(mktemp -d "$TMP/chr-XXXXXX")" \
    --window-size=1280,3000 --hide-scrollbars --screenshot="$SHOTS/$2.png" "file://$1" \
    >>"$TMP/$2.log" 2>&1 || bad "$2: chromium --screenshot failed"
  [ -s "$SHOTS/$2.png" ] && ok "$2: screenshot $SHOTS/$2.png" || bad "$2: no screenshot"
  grep -q 'ergon-selfcheck ok' "$TMP/$2.log" && ok "$2: the page's self-check logged ok" ||
    { bad "$2: no 'ergon-selfcheck ok' on the console"; grep -i console "$TMP/$2.log" | head; }
  if grep -E 'CONSOLE.*(error|Uncaught)|:ERROR:CONSOLE|Refused to' "$TMP/$2.log" | grep -v 'ergon-selfcheck ok' >/dev/null; then
    bad "$2: console errors"; grep -E 'CONSOLE|Refused' "$TMP/$2.log" | head
  else ok "$2: no console errors"; fi
}

