#!/usr/bin/env bash
# footprint.sh — start a daemon N times and report what it costs: binary
# size, time and CPU to ready, and memory once idle. Any binary can be
# measured this way (switchboard or a peer), so figures can be set side by
# side from one run on one machine.
#
#   deploy/footprint.sh [-n RUNS] [-w SETTLE_S] [-i IDLE_S] [-t STEP_S] [-r READY_URL | -l LOG_REGEX] [-o ROWS] -- COMMAND [ARGS...]
#   deploy/footprint.sh -s ROWS
#
#   -n RUNS       starts to measure (default 5); medians are printed
#   -w SETTLE_S   seconds after ready before the idle window starts (default 0)
#   -i IDLE_S     seconds of the idle window; memory is read at its end (default 2)
#   -t STEP_S     read memory every STEP_S seconds of the idle window instead, print
#                 each reading on stderr, and report their means (a daemon whose
#                 memory moves while idle is then not caught at one moment)
#   -r READY_URL  ready when this http:// URL answers 2xx (polled every 5 ms)
#   -l LOG_REGEX  ready when the command's output matches (bash's =~, ERE)
#   without -r/-l the command is read right after IDLE_S seconds (no ready time)
#   -o ROWS       also append each run's figures to the file ROWS
#   -s ROWS       print the medians of the figures in ROWS and exit
#
# Example (switchboard on the local PostgreSQL and Redis, no chat platform;
# sslmode=disable as in deploy/switchboard.example.yaml: without it pgx tries
# TLS first, and a local PostgreSQL with ssl = on, Debian's default, then
# costs every connection a TLS handshake on loopback):
#   CGO_ENABLED=0 go build -tags noembedded -trimpath -ldflags="-s -w" -o /tmp/sb ./cmd/switchboard
#   SWITCHBOARD_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test?sslmode=disable \
#   SWITCHBOARD_REDIS_URL=redis://127.0.0.1:6379/0 SWITCHBOARD_HTTP_LISTEN=127.0.0.1:18080 \
#     deploy/footprint.sh -r http://127.0.0.1:18080/readyz -- /tmp/sb serve
# A peer, by path, waiting for its log line:
#   deploy/footprint.sh -l 'gateway started' -- /path/to/peer gateway
# Two daemons side by side, starts alternating (a machine's speed can drift
# between runs minutes apart, so alternate rather than run one after the
# other):
#   for i in $(seq 12); do
#     deploy/footprint.sh -n 1 -o /tmp/a.rows -l 'telegram connected' -- /tmp/sb serve
#     deploy/footprint.sh -n 1 -o /tmp/b.rows -l 'gateway started' -- /path/to/peer gateway
#   done
#   deploy/footprint.sh -s /tmp/a.rows; deploy/footprint.sh -s /tmp/b.rows
# Memory settles only after the Go runtime's first periodic GC (2 min after
# start): to measure a daemon that has been idle for minutes, not seconds,
#   deploy/footprint.sh -n 3 -w 180 -i 10 -r http://127.0.0.1:18080/readyz -- /tmp/sb serve
# Memory read every 10 s over four idle minutes, their means reported:
#   deploy/footprint.sh -n 1 -w 60 -i 240 -t 10 -r http://127.0.0.1:18080/readyz -- /tmp/sb serve
#
# Columns: ready_ms (wall, start → ready), cpu_ms (CPU time of the
# process at ready, 0.1 ms resolution), VmRSS / RssAnon (private: heap, stacks) / RssFile
# (mapped pages of the binary and libraries) in KiB after IDLE_S idle (with
# -t: their means over the idle window),
# idle_cpu_ms (CPU used in the idle window: IDLE_S seconds, starting SETTLE_S
# seconds after ready).
set -euo pipefail

runs=5 settle=0 idle=2 step=0 ready_url="" log_re="" rows="" summary=""
while getopts "n:w:i:t:r:l:o:s:" opt; do
	case $opt in
	n) runs=$OPTARG ;;
	w) settle=$OPTARG ;;
	i) idle=$OPTARG ;;
	t) step=$OPTARG ;;
	r) ready_url=$OPTARG ;;
	l) log_re=$OPTARG ;;
	o) rows=$OPTARG ;;
	s) summary=$OPTARG ;;
	*) sed -n '2,47p' "$0" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[[ ${1:-} == "--" ]] && shift

median() { sort -n | awk '{ a[NR] = $1 } END { if (NR == 0) print "-"; else if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
header() { printf "%-4s %9s %7s %8s %8s %8s %12s\n" run ready_ms cpu_ms VmRSS RssAnon RssFile idle_cpu_ms; }
# medians FILE: the median of each column of the rows in FILE.
medians() {
	printf "%-4s" median
	local col w=(0 9 7 8 8 8 12)
	for col in 1 2 3 4 5 6; do
		printf " %${w[$col]}s" "$(awk -v c=$col '$c != "-" { print $c }' "$1" | median)"
	done
	echo
}
if [[ -n $summary ]]; then
	if [[ ! -s $summary ]]; then
		echo "footprint.sh: $summary holds no rows; write them with -o" >&2
		exit 2
	fi
	echo "$(wc -l <"$summary") runs in $summary"
	header
	medians "$summary"
	exit 0
fi
if [[ $# -eq 0 ]]; then
	echo "footprint.sh: no command given; usage: deploy/footprint.sh [-n RUNS] [-w SETTLE_S] [-i IDLE_S] [-r URL | -l REGEX] -- COMMAND..." >&2
	exit 2
fi
if [[ ! $step =~ ^[0-9]+$ ]] || { ((step > 0)) && [[ ! $idle =~ ^[0-9]+$ ]]; } || ((step > 0 && step > idle)); then
	echo "footprint.sh: with -t, -i and -t take whole seconds, -t no more than -i (got -i $idle -t $step)" >&2
	exit 2
fi
if [[ -n $ready_url ]]; then
	if [[ ! $ready_url =~ ^http://([^/:]+):([0-9]+)(/.*)?$ ]]; then
		echo "footprint.sh: -r wants http://HOST:PORT/PATH, got $ready_url" >&2
		exit 2
	fi
	ready_host=${BASH_REMATCH[1]} ready_port=${BASH_REMATCH[2]} ready_path=${BASH_REMATCH[3]:-/}
fi
bin=$(command -v "$1" || true)
if [[ -z $bin ]]; then
	echo "footprint.sh: $1: not found" >&2
	exit 2
fi

# cpu_ms PID: sets CPU to the CPU time of PID's threads in ms, from the
# scheduler's nanosecond counters (/proc/PID/task/*/schedstat) rather than
# the 10 ms ticks of /proc/PID/stat; threads that already exited are not
# counted.
cpu_ms() {
	local f ns=0 t
	for f in /proc/"$1"/task/*/schedstat; do
		read -r t _ <"$f" 2>/dev/null || continue
		ns=$((ns + t))
	done
	CPU=$((ns / 1000000)).$(((ns / 100000) % 10))
}
# status_kib PID FIELD
status_kib() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status"; }
# The ready poll runs every 5 ms beside the measured daemon on the same
# cores, so it starts no process and forks no subshell (either takes CPU
# from the cores the daemon starts on and delays what is measured): time
# from $EPOCHREALTIME into NOW rather than a $(...), the HTTP check over
# bash's /dev/tcp, the log check with read and [[ =~ ]], and the pause
# between checks a read that times out on a pipe nothing writes to rather
# than sleep, which is a program. The measured command does not inherit
# that pipe.
now_ms() { local t=${EPOCHREALTIME/[.,]/}; NOW=$((t / 1000)); }
exec {pause_fd}<> <(:)
pause() { read -r -t "$1" -u "$pause_fd" || true; }
# http_ok: the ready URL answers 2xx.
http_ok() {
	local status=""
	{ exec 3<>"/dev/tcp/$ready_host/$ready_port"; } 2>/dev/null || return 1
	printf 'GET %s HTTP/1.0\r\nHost: %s\r\n\r\n' "$ready_path" "$ready_host" >&3
	IFS=' ' read -r -t 1 _ status _ <&3 || true
	exec 3<&- 3>&-
	[[ $status == 2* ]]
}
# log_ok: a line of the command's output matches LOG_REGEX.
log_ok() {
	local text=""
	{ IFS= read -r -d '' text <"$1"; } 2>/dev/null || true
	[[ $text =~ $log_re ]]
}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
printf "binary %s: %d bytes\n" "$bin" "$(stat -L -c %s "$bin")"
header
for i in $(seq "$runs"); do
	log=$out/run$i.log
	now_ms
	start=$NOW
	"$@" >"$log" 2>&1 {pause_fd}>&- &
	pid=$!
	ready="-"
	deadline=$((start + 30000))
	if [[ -n $ready_url || -n $log_re ]]; then
		while :; do
			if ! kill -0 "$pid" 2>/dev/null; then
				echo "footprint.sh: the command exited before it was ready; its output:" >&2
				tail -20 "$log" >&2
				exit 1
			fi
			if [[ -n $ready_url ]] && http_ok; then break; fi
			if [[ -n $log_re ]] && log_ok "$log"; then break; fi
			now_ms
			if ((NOW > deadline)); then
				echo "footprint.sh: not ready after 30 s; its output:" >&2
				tail -20 "$log" >&2
				kill "$pid"
				exit 1
			fi
			pause 0.005
		done
		now_ms
		ready=$((NOW - start))
	fi
	cpu_ms "$pid"
	cpu_ready=$CPU
	cpu_settled=$cpu_ready
	if [[ $settle != 0 ]]; then
		sleep "$settle"
		cpu_ms "$pid"
		cpu_settled=$CPU
	fi
	if [[ $step == 0 ]]; then
		sleep "$idle"
		rss=$(status_kib "$pid" VmRSS) anon=$(status_kib "$pid" RssAnon) file=$(status_kib "$pid" RssFile)
	else
		n=0 rss=0 anon=0 file=0
		for ((t = step; t <= idle; t += step)); do
			sleep "$step"
			r=$(status_kib "$pid" VmRSS) a=$(status_kib "$pid" RssAnon) f=$(status_kib "$pid" RssFile)
			echo "run $i t=${t}s VmRSS $r RssAnon $a RssFile $f" >&2
			n=$((n + 1)) rss=$((rss + r)) anon=$((anon + a)) file=$((file + f))
		done
		rss=$((rss / n)) anon=$((anon / n)) file=$((file / n))
	fi
	cpu_ms "$pid"
	cpu_idle=$(awk -v a="$CPU" -v b="$cpu_settled" 'BEGIN { printf "%.1f", a - b }')
	kill "$pid"
	wait "$pid" 2>/dev/null || true
	printf "%-4s %9s %7s %8s %8s %8s %12s\n" "$i" "$ready" "$cpu_ready" "$rss" "$anon" "$file" "$cpu_idle"
	echo "$ready $cpu_ready $rss $anon $file $cpu_idle" >>"$out/all"
	if [[ -n $rows ]]; then echo "$ready $cpu_ready $rss $anon $file $cpu_idle" >>"$rows"; fi
done
medians "$out/all"
