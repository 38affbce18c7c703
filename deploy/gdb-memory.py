# gdb-memory.py: where a running Go daemon's private memory is, read from the
# Go runtime's own structures by gdb (docs/benchmarks.md, fifteenth round).
# It reports
#   - the heap's spans by size class: how many, their bytes, the bytes of the
#     objects in them, and the free room inside them (the heap does not
#     compact, so a span with one live object keeps all its pages);
#   - the span sets of the runtime's central lists, which hold one block of
#     about 4 KiB each while in use and are never given back to the system;
#   - every goroutine's stack: its size, the bytes in use and where it began.
#
# It needs a build with symbols (not -ldflags="-s -w"), e.g.
#   CGO_ENABLED=0 go build -tags noembedded -trimpath -o /tmp/sbsym ./cmd/switchboard
#   gdb -p "$(pgrep -f '/tmp/sbsym serve')" -batch -x deploy/gdb-memory.py
# gdb stops the process while it reads (a few seconds) and detaches after.
# Written for Go 1.26's runtime; field names may change in later releases.
import collections

import gdb


def spans():
    heap = gdb.parse_and_eval("'runtime.mheap_'")
    allspans = heap["allspans"]
    by_class = collections.defaultdict(lambda: [0, 0, 0])  # spans, bytes, object bytes
    for i in range(int(allspans["len"])):
        s = allspans["array"][i].dereference()
        if int(s["state"]["s"]["value"]) != 1:  # mSpanInUse: heap objects, not stacks
            continue
        c = by_class[int(s["spanclass"])]
        c[0] += 1
        c[1] += int(s["npages"]) * 8192
        c[2] += int(s["allocCount"]) * int(s["elemsize"])
    total = [sum(c[i] for c in by_class.values()) for i in range(3)]
    print("heap spans %d, %d bytes, objects %d bytes, free room inside them %d bytes, %d span classes"
          % (total[0], total[1], total[2], total[1] - total[2], len(by_class)))
    rows = sorted(by_class.items(), key=lambda kv: kv[1][2] - kv[1][1])
    for spanclass, (n, size, used) in rows[:15]:
        print("  size class %2d %-6s spans %3d bytes %7d objects %7d free %7d"
              % (spanclass >> 1, "noscan" if spanclass & 1 else "scan", n, size, used, size - used))


def span_sets():
    central = gdb.parse_and_eval("'runtime.mheap_'")["central"]
    lo, hi = central.type.range()
    sets = blocks = 0
    for i in range(lo, hi + 1):
        c = central[i]["mcentral"]
        for lists in ("partial", "full"):
            for j in range(2):
                n = int(c[lists][j]["spineLen"]["value"])
                sets += 1 if n else 0
                blocks += n
    size = gdb.lookup_type("runtime.spanSetBlock").sizeof
    print("span sets in use %d, blocks on their spines %d (%d bytes each, off the heap)"
          % (sets, blocks, size))


def stacks():
    allgs = gdb.parse_and_eval("'runtime.allgs'")
    rows = []
    for i in range(int(allgs["len"])):
        g = allgs["array"][i].dereference()
        if int(g["atomicstatus"]["value"]) == 6:  # _Gdead
            continue
        lo, hi, sp = int(g["stack"]["lo"]), int(g["stack"]["hi"]), int(g["sched"]["sp"])
        start = gdb.execute("info symbol %d" % int(g["startpc"]), to_string=True).split(" in ")[0].strip()
        # A running goroutine's saved stack pointer is stale: its use is unknown.
        running = int(g["atomicstatus"]["value"]) == 2  # _Grunning
        used = "%6d" % (hi - sp) if lo <= sp <= hi and not running else "     ?"
        rows.append((hi - lo, used, start))
    rows.sort(key=lambda r: r[0], reverse=True)
    print("goroutines %d, stacks %d bytes" % (len(rows), sum(r[0] for r in rows)))
    for size, used, start in rows[:15]:
        print("  stack %6d in use %s %s" % (size, used, start))


spans()
span_sets()
stacks()
