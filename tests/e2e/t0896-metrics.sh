#!/bin/sh
# trawl relay --metrics (docs/metrics.md) against the real thing: Debian's
# prometheus package (promtool and the server).
#
# Checks: GET /metrics answers the text format 0.0.4 (its content type,
# HELP and TYPE lines, counters ending _total) and OpenMetrics 1.0 when the
# Accept header asks (its content type, counter families named without
# _total, UNIT lines, "# EOF" last); promtool check metrics accepts every
# exposition the test gets; a wrong path is 404, another method 405; the
# hostile cases: a request over the size limit gets 431, a client that
# sends its request a byte at a time (slowloris) is closed at the timeout
# while other scrapes are answered meanwhile, connections over the limit
# get 503; a non-loopback address without a token is refused at start, and
# with a token a scrape without it is 401, with it 200. As root (kernel
# events): a program making exactly 1000 getppid calls a second, recorded
# with `trawl record -k syscalls --relay --only-command`, seen by a
# prometheus server scraping the relay every second: rate() over 10 s of
# trawl_host_syscalls_total{syscall="getppid"} from its HTTP API is within
# 5 % of 1000, and the relay's node counters are there for that host.
. "$TRAWL_SRC/tests/e2e/lib.sh"
command -v promtool > /dev/null 2>&1 || skip_all "promtool is not installed (Debian's prometheus package, scripts/install-deps.sh)"
command -v curl > /dev/null 2>&1 || skip_all "no curl"
command -v python3 > /dev/null 2>&1 || skip_all "no python3"
plan 26

: > empty.conf
export TRAWL_CONFIG="$TRASH/empty.conf"
RELAY="" RELAY2="" PROM="" REC="" AGENT=""
cleanup() {
	for p in $REC $PROM $AGENT $RELAY2 $RELAY; do kill "$p" 2> /dev/null; done
}
trap cleanup EXIT
trap 'cleanup; exit 1' INT TERM HUP
bail() { echo "Bail out! $*"; exit 1; }

"$TRAWL" relay -o OUT --data 127.0.0.1:0 --live 127.0.0.1:0 --metrics 127.0.0.1:0 \
	--pidfile relay.pid > relay.out 2> relay.err
RELAY=$(cat relay.pid 2> /dev/null)
DATA=$(sed -n 's/^trawl relay: data on \([^,]*\), live on \([^,]*\), .*/\1/p' relay.out)
M=$(sed -n 's|^trawl relay: metrics on http://\([^/]*\)/metrics.*|\1|p' relay.out)
[ -n "$RELAY" ] && [ -n "$DATA" ] && [ -n "$M" ] || { cat relay.out relay.err; bail "the relay did not start"; }

# ---- 1. the two formats
curl -s -D h004.txt -o m004.txt "http://$M/metrics"
grep -qi '^content-type: text/plain; version=0.0.4' h004.txt
ok $? "0.0.4: Content-Type text/plain; version=0.0.4"
promtool check metrics < m004.txt > pt1.txt 2>&1
ok $? "promtool check metrics accepts the 0.0.4 exposition $(sed 's/^/# /' pt1.txt | head -5)"
grep -q '^# TYPE trawl_relay_refused_connections_total counter$' m004.txt &&
	grep -q '^trawl_relay_refused_connections_total{reason="quota"} 0$' m004.txt
ok $? "0.0.4: a counter's TYPE and samples are named ..._total"
bad=$(grep '^# TYPE' m004.txt | awk '$4 == "counter" && $3 !~ /_total$/' | wc -l)
is "$bad" 0 "0.0.4: every counter ends in _total"

curl -s -D hom.txt -o mom.txt -H 'Accept: application/openmetrics-text; version=1.0.0; charset=utf-8' \
	"http://$M/metrics"
grep -qi '^content-type: application/openmetrics-text; version=1.0.0' hom.txt
ok $? "OpenMetrics when asked: its Content-Type"
is "$(tail -n 1 mom.txt)" "# EOF" "OpenMetrics: the exposition ends with # EOF"
grep -q '^# TYPE trawl_relay_node_received_bytes counter$' mom.txt &&
	grep -q '^# UNIT trawl_relay_node_received_bytes bytes$' mom.txt &&
	grep -q '^# TYPE trawl_relay_refused_connections counter$' mom.txt &&
	grep -q '^trawl_relay_refused_connections_total{reason="quota"} 0$' mom.txt
ok $? "OpenMetrics: counter families without _total, their UNIT, samples with _total"
curl -s -H 'Accept: text/plain' "http://$M/metrics" | grep -q '^# EOF'
[ $? -ne 0 ]
ok $? "no # EOF in the text format"

# ---- 2. wrong path, method
is "$(curl -s -o /dev/null -w '%{http_code}' "http://$M/nope")" 404 "a wrong path: 404"
is "$(curl -s -o /dev/null -w '%{http_code}' -X POST "http://$M/metrics")" 405 "POST: 405"

# ---- 3. hostile clients
cat > hostile.py <<'EOF'
import socket, sys, time, threading, urllib.request
host, port = sys.argv[2].rsplit(":", 1)
port = int(port)
what = sys.argv[1]
def conn():
    s = socket.create_connection((host, port), timeout=20)
    return s
def status(s):
    d = b""
    while True:
        try:
            b = s.recv(4096)
        except socket.timeout:
            return "timeout"
        if not b:
            break
        d += b
    return d.split(b"\r\n", 1)[0].decode() if d else "closed"
if what == "large":
    s = conn()
    s.sendall(b"GET /metrics HTTP/1.1\r\nX-Pad: " + b"a" * 9000 + b"\r\n\r\n")
    print(status(s))
elif what == "slowloris":
    # a byte every 0.5 s, never the end of the header; meanwhile a scrape
    s = conn()
    t0 = time.monotonic()
    req = b"GET /metrics HTTP/1.1\r\nX-Slow: " + b"b" * 100
    other = []
    def scrape():
        t = time.monotonic()
        with urllib.request.urlopen("http://%s:%d/metrics" % (host, port), timeout=10) as r:
            r.read()
            other.append((r.status, time.monotonic() - t))
    closed = None
    for i, c in enumerate(req):
        if i == 4:
            threading.Thread(target=scrape).start()
        try:
            s.sendall(bytes([c]))
            s.settimeout(0.5)
            b = s.recv(100)
            if b == b"":
                closed = time.monotonic() - t0
                break
        except socket.timeout:
            continue
        except (BrokenPipeError, ConnectionResetError):
            closed = time.monotonic() - t0
            break
    print("closed %.1f" % closed if closed is not None else "open")
    print("scrape %d %.2f" % other[0] if other else "scrape none")
elif what == "many":
    n = int(sys.argv[3])
    held = [conn() for _ in range(n)]
    for h in held:
        h.sendall(b"G")
    time.sleep(0.2)
    s = conn()
    s.sendall(b"GET /metrics HTTP/1.1\r\n\r\n")
    print(status(s))
EOF
is "$(python3 hostile.py large "$M")" "HTTP/1.1 431 Request Header Fields Too Large" "a request over 4 KiB: 431"
python3 hostile.py slowloris "$M" > slow.txt 2>&1
c=$(sed -n 's/^closed \([0-9.]*\)$/\1/p' slow.txt)
[ -n "$c" ] && python3 -c "import sys; sys.exit(not (4.5 <= float('$c') <= 8))"
ok $? "slowloris: closed at the 5 s timeout ($(tr '\n' ' ' < slow.txt))"
s=$(sed -n 's/^scrape \([0-9]*\) \([0-9.]*\)$/\1 \2/p' slow.txt)
[ "${s%% *}" = 200 ] && python3 -c "import sys; sys.exit(not float('${s#* }') < 2)"
ok $? "slowloris: a scrape meanwhile is answered at once ($s)"
is "$(python3 hostile.py many "$M" 8)" "HTTP/1.1 503 Service Unavailable" "the 9th connection at once: 503"

# ---- 4. a token
"$TRAWL" relay -o OUT2 --data 127.0.0.1:0 --live 127.0.0.1:0 --metrics 0.0.0.0:0 \
	-f > r2.out 2> r2.err
[ $? -ne 0 ] && grep -q 'need a token' r2.err
ok $? "a metrics address not on loopback without a token: refused ($(head -c 200 r2.err))"
umask 077
echo "0123456789abcdef0123" > token
"$TRAWL" relay -o OUT2 --data 127.0.0.1:0 --live 127.0.0.1:0 --metrics 127.0.0.1:0 \
	--metrics-token-file token --pidfile relay2.pid > r2.out 2> r2.err
RELAY2=$(cat relay2.pid 2> /dev/null)
M2=$(sed -n 's|^trawl relay: metrics on http://\([^/]*\)/metrics.*|\1|p' r2.out)
a=$(curl -s -o /dev/null -w '%{http_code}' "http://$M2/metrics")
b=$(curl -s -o /dev/null -w '%{http_code}' -H 'Authorization: Bearer 0123456789abcdef0124' "http://$M2/metrics")
c=$(curl -s -o /dev/null -w '%{http_code}' -H 'Authorization: Bearer 0123456789abcdef0123' "http://$M2/metrics")
is "$a $b $c" "401 401 200" "with a token: none 401, a wrong one 401, the right one 200"
kill "$RELAY2"; RELAY2=""

# ---- 5. the agent's metrics
export TRAWL_AGENT_SOCKET="$TRASH/agent.sock"
"$TRAWL" agent --metrics 127.0.0.1:0 --pidfile agent.pid > agent.out 2> agent.err
AGENT=$(cat agent.pid 2> /dev/null)
AM=$(sed -n 's|^trawl agent: metrics on http://\([^/]*\)/metrics.*|\1|p' agent.out)
[ -n "$AGENT" ] && [ -n "$AM" ] || { cat agent.out agent.err; bail "the agent did not start"; }
"$TRAWL" create am1 -o "$TRASH/am1" > create.out 2>&1
curl -s "http://$AM/metrics" > agent004.txt
promtool check metrics < agent004.txt > pt4.txt 2>&1 &&
	grep -q '^trawl_agent_sessions{state="new"} 1$' agent004.txt &&
	grep -q '^trawl_agent_session_recording{session="am1"} 0$' agent004.txt
ok $? "agent --metrics: promtool accepts it, the session created is there, not recording $(sed 's/^/# /' pt4.txt | head -3)"
"$TRAWL" enable am1 'none:*' > enable.out 2>&1
"$TRAWL" start am1 > start.out 2>&1
curl -s -H 'Accept: application/openmetrics-text' "http://$AM/metrics" > agentom.txt
grep -q '^trawl_agent_session_recording{session="am1"} 1$' agentom.txt &&
	grep -q '^trawl_agent_sessions{state="active"} 1$' agentom.txt
ok $? "agent: the started session is recording $(head -c 200 start.out)"
is "$(tail -n 1 agentom.txt)" "# EOF" "agent: OpenMetrics ends with # EOF"
"$TRAWL" agent --stop > /dev/null 2>&1; AGENT=""

# ---- 6. prometheus scrapes the relay while a known rate is recorded
if [ "$(id -u)" != 0 ] || ! "$TRAWL" record -q -k syscalls -o kcheck --host k --no-ust \
	--duration 0.1 > /dev/null 2>&1; then
	for i in 1 2 3 4 5 6 7; do skip "kernel events need root and tracefs"; done
	finish
fi
command -v prometheus > /dev/null 2>&1 || { for i in 1 2 3 4 5 6 7; do skip "no prometheus server"; done; finish; }
${CC:-cc} -std=gnu11 -O2 -Wall -Wextra -Werror -o getppid-rate \
	"$TRAWL_SRC/tests/e2e/getppid-rate.c" > gp-cc.log 2>&1 || bail "getppid-rate does not build"
PP=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat > prom.yml <<EOF
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: trawl
    static_configs:
      - targets: ['$M']
EOF
promtool check config prom.yml > /dev/null 2>&1 || bail "prometheus: bad config"
prometheus --config.file=prom.yml --storage.tsdb.path=pdata --web.listen-address="127.0.0.1:$PP" \
	> prom.log 2>&1 &
PROM=$!
until_ok 60 curl -sf "http://127.0.0.1:$PP/-/ready" -o /dev/null
ok $? "prometheus is ready on 127.0.0.1:$PP"
"$TRAWL" record --relay "$DATA" --session gp --host gph -k syscalls --live-timer 100 --no-ust \
	--only-command -- ./getppid-rate 1000 30 > rec.out 2> rec.err &
REC=$!
# query prometheus: QUERY -> the first result's value, or nothing
q() {
	curl -s "http://127.0.0.1:$PP/api/v1/query" --data-urlencode "query=$1" |
		python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else "")'
}
# 12 s of the workload scraped (its start counts 10 s later): the rate of
# a 10 s window inside it
have() { [ -n "$(q 'trawl_host_syscalls_total{syscall="getppid",host="gph"}')" ]; }
until_ok 60 have
ok $? "prometheus has the host's getppid counter"
sleep_until_ok() { until_ok 30 eval '[ "$(q "count_over_time(trawl_host_syscalls_total{syscall=\"getppid\",host=\"gph\"}[20s])")" -ge 13 ] 2>/dev/null'; }
sleep_until_ok
rate=$(q 'rate(trawl_host_syscalls_total{syscall="getppid",host="gph"}[10s])')
python3 -c "import sys; r=float('${rate:-0}'); sys.exit(not abs(r - 1000) <= 50)"
ok $? "rate(getppid[10s]) from prometheus' API is within 5 % of 1000/s (${rate:-none})"
curl -s "http://$M/metrics" > mlive.txt
promtool check metrics < mlive.txt > pt3.txt 2>&1
ok $? "promtool accepts the exposition with a host's metrics $(sed 's/^/# /' pt3.txt | head -5)"
grep -q '^trawl_host_syscall_latency_seconds_bucket{session="gp",host="gph",syscall="getppid",le="+Inf"} ' mlive.txt &&
	grep -q '^trawl_relay_node_received_bytes_total{session="gp",host="gph"} [1-9]' mlive.txt
ok $? "the host's syscall latency histogram and the relay's node counters are exposed"
# CPU time by the kernel model's modes: the workload's calls are system
# time, its loop between them user time, and no state counts more than
# the host's CPUs over the recording
python3 - mlive.txt "$(nproc)" > modes.txt << 'EOF2'
import re, sys
v = {}
for l in open(sys.argv[1]):
    m = re.match(r'^trawl_host_cpu_seconds_total\{session="gp",host="gph",state="(\w+)"\} (\S+)$', l)
    if m:
        v[m.group(1)] = float(m.group(2))
want = {'user', 'system', 'irq', 'softirq', 'idle', 'unknown'}
ok = set(v) == want and v['system'] > 0 and v['user'] > 0 and sum(v.values()) <= int(sys.argv[2]) * 40
print('ok' if ok else 'states %s' % v)
EOF2
is "$(cat modes.txt)" ok "the host's CPU seconds by state: user and system counted, within its CPUs' time"
n=$(grep -c '^trawl_host_syscalls_total{session="gp",host="gph",' mlive.txt)
[ "$n" -le 17 ]
ok $? "at most top-K (16) syscalls + other per host ($n)"
wait "$REC"; REC=""
finish
