# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# Sourced by tests/net/run.sh, after session.sh: what a hostile sandbox can
# make psrun spend of the host's CPU, outside the sandbox's cgroup
# (docs/security.md, "Host CPU a sandbox can make psrun spend").
#   - a restricted sandbox (cpu_limit 0.5) sends DNS queries for random
#     names none allowed as fast as it can for 3 s; another sends UDP to
#     refused addresses (each a refusal the firewall reports);
#   - psrun's own CPU (utime + stime of the process and its threads, from
#     /proc/PID/stat) over the flood must stay under FLOOD_MAX_PCT % of one
#     core; the result must report what the rate limits held back; an
#     allowed name must resolve right after;
#   - the same with the table's limit rules deleted from outside (psrun's
#     own bound alone), and for a session's supervisor.
#   - the name check: new connections as fast as they go, and 60 held open
#     sent ClientHellos a byte at a time (names.sh's shared address).
# Uses run.sh's helpers (ok, bad, RESTRICTED, PY) and session.sh's.

FLOOD=$(cat "$HERE/flood.py")
FLOOD_MAX_PCT=10
TICK_MS=$((1000 / $(getconf CLK_TCK)))

# cpu_ms PID: utime + stime of the process (all its threads), in ms.
cpu_ms() {
	# The fields after the command name, which is in parentheses.
	sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | awk -v t="$TICK_MS" '{print ($12 + $13) * t}'
}

# flood_measure PID OUT: waits for the sandbox to start its flood (OUT's
# "flooding" line), then prints psrun's CPU over the next 2.5 s, in percent
# of one core, and its pid's threads' CPU ms.
flood_measure() {
	local pid=$1 out=$2 i c0 c1 t0 t1
	for i in $(seq 100); do
		grep -q '^flooding' "$out" 2>/dev/null && break
		sleep 0.05
	done
	c0=$(cpu_ms "$pid")
	t0=$(date +%s%N)
	sleep 2.5
	c1=$(cpu_ms "$pid")
	t1=$(date +%s%N)
	if [ -z "$c0" ] || [ -z "$c1" ]; then
		echo "none"
		return
	fi
	# ms of CPU per ms of wall time, in percent.
	awk -v c=$((c1 - c0)) -v t=$((t1 - t0)) 'BEGIN {printf "%.1f\n", c * 100000000 / t}'
}

# flood_once KIND OUT [psrun options...]: one flooding sandbox; prints
# psrun's CPU percent.
flood_once() {
	local kind=$1 out=$2
	shift 2
	rm -f "$out" "$out.err"
	nsenter -F --net=/run/netns/$OUT "$PSRUN" run --json "${RESTRICTED[@]}" -o cpu_limit=0.5 "$@" -- \
		"$PY" -c "$FLOOD" 1 "$kind" 3 "${FLOOD_NAME:-allowed.test}" >"$out" 2>"$out.err" &
	local pid=$!
	if [ "${FLOOD_UNLIMIT:-}" = 1 ]; then
		# The table's limits deleted from outside, once the table is there.
		local id="" i h
		for i in $(seq 50); do
			id=$(ip netns exec $OUT nft list tables 2>/dev/null | sed -n 's/^table inet psrun_//p' | head -1)
			[ -n "$id" ] && break
			sleep 0.05
		done
		for h in $(ip netns exec $OUT nft -a list table inet "psrun_$id" 2>/dev/null |
			sed -n 's/.*limit rate over.*# handle \([0-9]*\)$/\1/p'); do
			ip netns exec $OUT nft delete rule inet "psrun_$id" from_sandbox_to_host handle "$h" 2>/dev/null ||
				ip netns exec $OUT nft delete rule inet "psrun_$id" log_refusal handle "$h"
		done
	fi
	flood_measure "$pid" "$out"
	wait "$pid"
}

# flood_cpu KIND OUT [options...]: psrun's CPU percent, once, or the
# median of three when the first is over the bound (the machine is shared:
# a measurement can be unlucky, three in a row are not).
flood_cpu() {
	local first
	first=$(flood_once "$@")
	if [ "$first" = none ] || awk -v c="$first" -v m="$FLOOD_MAX_PCT" 'BEGIN {exit !(c < m)}'; then
		echo "$first"
		return
	fi
	{
		echo "$first"
		flood_once "$@"
		flood_once "$@"
	} | sort -n | sed -n 2p
}

under_bound() { [ "$1" != none ] && awk -v c="$1" -v m="$FLOOD_MAX_PCT" 'BEGIN {exit !(c < m)}'; }
sent_per_s() { awk '/^sent / {printf "%d", $2 / 3}' "$1"; }

# ---- DNS: queries for names not allowed, as fast as the sandbox can ----
pct=$(flood_cpu dns "$TMP/fd" -o network_log="$TMP/fdlog")
rate=$(sent_per_s "$TMP/fd")
if under_bound "$pct" && [ "${rate:-0}" -ge 2000 ]; then
	ok "flood: DNS queries for denied names ($rate/s) cost psrun $pct% of a core (< $FLOOD_MAX_PCT%)"
else
	bad "flood: DNS queries for denied names cost psrun < $FLOOD_MAX_PCT% of a core" \
		"$pct% at ${rate:-?} queries/s: $(tail -c 300 "$TMP/fd.err")"
fi
if grep -q '"name":"rate limit: DNS queries dropped","count":[1-9]' "$TMP/fd.err" &&
	grep -q '{"layer":"network","what":"rate limit: DNS queries dropped","count":[1-9]' "$TMP/fd.err" &&
	grep -q '"denied_queries":[1-9][0-9][0-9]' "$TMP/fd.err"; then
	ok "flood: the result counts the denied queries and those the rate limit dropped"
else
	bad "flood: the result counts the denied queries and those the rate limit dropped" "$(tail -c 600 "$TMP/fd.err")"
fi
if grep -q '^resolve allowed.test -> 198.18.0.10 in' "$TMP/fd" &&
	[ "$(sed -n 's/^resolve allowed.test -> .* in \([0-9]*\) ms/\1/p' "$TMP/fd")" -lt 1000 ]; then
	ok "flood: an allowed name resolves right after the flood ($(sed -n 's/.* in //p' "$TMP/fd"))"
else
	bad "flood: an allowed name resolves right after the flood" "$(grep resolve "$TMP/fd")"
fi
# The log is bounded by the same rates: a line per query the proxy read.
lines=$(wc -l <"$TMP/fdlog" 2>/dev/null || echo 0)
# (netns/netns.h: 250/s and 50/s, bursts 500 and 100; 5 s: the run's.)
max=$((5 * (250 + 50) + 500 + 100))
if [ "$lines" -gt 0 ] && [ "$lines" -le "$max" ]; then
	ok "flood: network_log has $lines lines for the flood (at most $max)"
else
	bad "flood: network_log stays within the rate" "$lines lines, more than $max"
fi

# ---- UDP to refused addresses: each one a refusal the firewall reports ----
pct=$(flood_cpu udp "$TMP/fu")
rate=$(sent_per_s "$TMP/fu")
if under_bound "$pct" && [ "${rate:-0}" -ge 2000 ]; then
	ok "flood: UDP to refused addresses ($rate/s) costs psrun $pct% of a core (< $FLOOD_MAX_PCT%)"
else
	bad "flood: UDP to refused addresses costs psrun < $FLOOD_MAX_PCT% of a core" \
		"$pct% at ${rate:-?} datagrams/s: $(tail -c 300 "$TMP/fu.err")"
fi
if grep -q '"name":"rate limit: refusals not itemized (NFLOG)","count":[1-9]' "$TMP/fu.err" &&
	grep -q '"addr":"198.18.[2-9].[0-9]*","port":[0-9]*,"proto":"udp"' "$TMP/fu.err" &&
	grep -q '"denied_more":[1-9]' "$TMP/fu.err"; then
	ok "flood: the result lists the first refusals and counts those past the log's rate"
else
	bad "flood: the result lists the first refusals and counts those past the log's rate" "$(tail -c 600 "$TMP/fu.err")"
fi

# ---- psrun's own bound alone: the table's limit rules deleted ----
pct=$(FLOOD_UNLIMIT=1 flood_cpu dns "$TMP/fdu")
if under_bound "$pct" && grep -q '"name":"rate limit: DNS queries dropped","count":[1-9]' "$TMP/fdu.err"; then
	ok "flood: without the kernel's limits, the proxy's own bound holds DNS to $pct% (and counts it)"
else
	bad "flood: without the kernel's limits, the proxy's own bound holds DNS" "$pct%: $(tail -c 400 "$TMP/fdu.err")"
fi
pct=$(FLOOD_UNLIMIT=1 flood_cpu udp "$TMP/fuu")
if under_bound "$pct" && grep -q '"name":"rate limit: refusals not itemized (NFLOG)","count":[1-9]' "$TMP/fuu.err"; then
	ok "flood: without the kernel's limits, the NFLOG reader's own bound holds to $pct% (and counts it)"
else
	bad "flood: without the kernel's limits, the NFLOG reader's own bound holds" "$pct%: $(tail -c 400 "$TMP/fuu.err")"
fi

# ---- the name check (tests/net/names.sh): connections, and hellos a byte at a time ----
# (names.sh's shared address, 198.18.0.40, serves them.)
if [ -e "$NT/srv.pem" ]; then
pct=$(FLOOD_NAME=shared.zone.test flood_cpu conn "$TMP/fc" -o name_check=on)
rate=$(sent_per_s "$TMP/fc")
if under_bound "$pct" && [ "${rate:-0}" -ge 100 ]; then
	ok "flood: new connections for the name check ($rate/s) cost psrun $pct% of a core (< $FLOOD_MAX_PCT%)"
else
	bad "flood: new connections for the name check cost psrun < $FLOOD_MAX_PCT% of a core" \
		"$pct% at ${rate:-?} connections/s: $(tail -c 300 "$TMP/fc.err")"
fi
if grep -q '"name":"tls not tls to 198.18.0.40:443","count":[1-9]' "$TMP/fc.err" &&
	grep -q '"name":"rate limit: connections to the name check dropped","count":[1-9]' "$TMP/fc.err"; then
	ok "flood: the result counts the refused connections and those the rate limit dropped"
else
	bad "flood: the result counts the refused connections and those the rate limit dropped" "$(tail -c 600 "$TMP/fc.err")"
fi
pct=$(FLOOD_NAME=shared.zone.test flood_cpu trickle "$TMP/ft" -o name_check=on)
rate=$(sent_per_s "$TMP/ft")
if under_bound "$pct" && [ "${rate:-0}" -ge 10000 ]; then
	ok "flood: 60 hellos a byte at a time ($rate bytes/s) cost psrun $pct% of a core (< $FLOOD_MAX_PCT%)"
else
	bad "flood: 60 hellos a byte at a time cost psrun < $FLOOD_MAX_PCT% of a core" \
		"$pct% at ${rate:-?} bytes/s, $(awk '/^tcp /{print $2}' "$TMP/ft") connections: $(tail -c 300 "$TMP/ft.err")"
fi
fi

# ---- a session: its supervisor runs the same proxy ----
sid=$(screate "${S_RESTRICTED[@]}" -o cpu_limit=0.5)
if [ -z "$sid" ]; then
	bad "flood: a session starts" "$(cat "$TMP/screate.err")"
else
	ssup=$(sup_of "$sid")
	inside session exec --json "$sid" -- "$PY" -c "$FLOOD" 1 dns 3 allowed.test >"$TMP/fs" 2>"$TMP/fs.err" &
	epid=$!
	pct=$(flood_measure "$ssup" "$TMP/fs")
	wait $epid
	if under_bound "$pct"; then
		ok "flood: a session's DNS flood costs its supervisor $pct% of a core (< $FLOOD_MAX_PCT%)"
	else
		bad "flood: a session's DNS flood costs its supervisor < $FLOOD_MAX_PCT% of a core" \
			"$pct% at $(sent_per_s "$TMP/fs") queries/s"
	fi
	if grep -q '"name":"rate limit: DNS queries dropped","count":[1-9]' "$TMP/fs.err" &&
		grep -q '^resolve allowed.test -> 198.18.0.10 in' "$TMP/fs"; then
		ok "flood: the session's exec reports what the rate limit dropped, and still resolves"
	else
		bad "flood: the session's exec reports what the rate limit dropped, and still resolves" \
			"$(grep resolve "$TMP/fs"): $(tail -c 400 "$TMP/fs.err")"
	fi
	inside session destroy "$sid" 2>/dev/null
fi

# ---- what a real client needs: session.sh's pip install from the fake index ----
# (Its network's counts, in its result: far under the rates above.)
q=$(grep -o '"network":{"allowed_queries":[0-9]*,"denied_queries":[0-9]*' "$TMP/i1.err" 2>/dev/null |
	awk -F'[:,]' '{print $3 + $5}')
ms=$(grep -o '"wall_ms":[0-9]*' "$TMP/i1.err" 2>/dev/null | head -1 | cut -d: -f2)
if [ -n "$q" ] && [ -n "$ms" ] && [ "$q" -gt 0 ] && [ "$q" -le 100 ] &&
	[ $((q * 1000 / (ms + 1))) -lt 50 ]; then
	ok "flood: pip's install from the fake index made $q queries in $ms ms, far under 250/s, burst 500"
else
	bad "flood: pip's install from the fake index stays far under the DNS rate" "'$q' queries in '$ms' ms"
fi
