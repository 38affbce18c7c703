# gdb-memory.py: where a running Go daemon's private memory is, read from the
# Go runtime's own structures by gdb.
# It reports
#   - the heap's spans by size class: how many, their bytes, the bytes of the
#     objects in them, and the free room inside them (the heap does not
#     compact, so a span with one live object keeps all its pages);
#   - the span sets of the runtime's central lists, which hold one block of
#     about 4 KiB each while in use and are never given back to the system;
#   - every goroutine's stack: its size, the bytes in use and where it began;
#   - which of those pages are resident (read from /proc/PID/pagemap): the
#     heap's spans, the goroutines' stacks and each thread's two stacks
#     (the scheduler's and the signal handler's);
#   - the objects over 512 bytes by type, per size class (the runtime keeps
#     a pointer to the type at the start of each), to tell whose objects
#     hold a sparse span.
#
# It needs a build with symbols (not -ldflags="-s -w"), e.g.
#   CGO_ENABLED=0 go build -tags noembedded -trimpath -o /tmp/sbsym ./cmd/switchboard
#   gdb -p "$(pgrep -f '/tmp/sbsym serve')" -batch -x deploy/gdb-memory.py
# gdb stops the process while it reads (a few seconds) and detaches after.
# Written for Go 1.26's runtime; field names may change in later releases.
import collections
import struct

import gdb

PAGE = 4096
SPINE_CAP = 256  # runtime.spanSetInitSpineCap, a constant gdb cannot read


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
    # A set allocates its spine (spanSetInitSpineCap pointers) at its first
    # span and keeps it for good, in use or not.
    spines = sum(1 for i in range(lo, hi + 1) for lists in ("partial", "full") for j in range(2)
                 if int(central[i]["mcentral"][lists][j]["spineCap"]))
    print("span sets with a spine %d (%d bytes each, never given back)" % (spines, 8 * SPINE_CAP))


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


class Pagemap:
    """Which pages of the process are resident, from /proc/PID/pagemap."""

    def __init__(self):
        self.f = open("/proc/%d/pagemap" % gdb.selected_inferior().pid, "rb")

    def pages(self, lo, hi):
        """The resident pages of [lo, hi), by number."""
        first, n = lo // PAGE, (hi + PAGE - 1) // PAGE - lo // PAGE
        self.f.seek(first * 8)
        data = self.f.read(n * 8)
        return {first + i for i in range(n) if struct.unpack_from("<Q", data, i * 8)[0] >> 63}

    def resident(self, lo, hi):
        """Resident bytes of [lo, hi)."""
        return PAGE * len(self.pages(lo, hi))


def resident():
    pm = Pagemap()
    allspans = gdb.parse_and_eval("'runtime.mheap_'")["allspans"]
    kinds = {1: [0, 0, 0], 2: [0, 0, 0]}  # mSpanInUse, mSpanManual (stacks): spans, bytes, resident
    for i in range(int(allspans["len"])):
        s = allspans["array"][i].dereference()
        k = kinds.get(int(s["state"]["s"]["value"]))
        if k is None:
            continue
        lo = int(s["startAddr"])
        hi = lo + int(s["npages"]) * 8192
        k[0] += 1
        k[1] += hi - lo
        k[2] += pm.resident(lo, hi)
    for state, name in ((1, "heap object spans"), (2, "stack spans")):
        n, size, res = kinds[state]
        print("%s %d, %d bytes, resident %d" % (name, n, size, res))

    # Small stacks share pages: count each resident page once.
    def stacks_of(gs):
        size, pages = 0, set()
        for g in gs:
            lo, hi = int(g["stack"]["lo"]), int(g["stack"]["hi"])
            size += hi - lo
            pages |= pm.pages(lo, hi)
        return size, PAGE * len(pages)

    g0s, gsignals = [], []
    m = gdb.parse_and_eval("'runtime.allm'")
    while int(m) != 0:
        mm = m.dereference()
        g0s += [mm["g0"].dereference()] if int(mm["g0"]) else []
        gsignals += [mm["gsignal"].dereference()] if int(mm["gsignal"]) else []
        m = mm["alllink"]
    print("threads %d: scheduler stacks %d bytes, resident %d; signal stacks %d bytes, resident %d"
          % ((len(g0s),) + stacks_of(g0s) + stacks_of(gsignals)))
    allgs = gdb.parse_and_eval("'runtime.allgs'")
    live = [allgs["array"][i].dereference() for i in range(int(allgs["len"]))]
    live = [g for g in live if int(g["atomicstatus"]["value"]) != 6]  # not _Gdead
    print("goroutine stacks %d, %d bytes, resident %d" % ((len(live),) + stacks_of(live)))


def type_name(inf, types, abi_type, t):
    """The name of the runtime type at address t."""
    try:
        p = types + int(gdb.Value(t).cast(abi_type.pointer()).dereference()["Str"])
        n, shift, i = 0, 0, 1  # a flags byte, then the length as a varint
        while True:
            c = inf.read_memory(p + i, 1).tobytes()[0]
            n, shift, i = n | (c & 0x7F) << shift, shift + 7, i + 1
            if c < 0x80:
                break
        return inf.read_memory(p + i, n).tobytes().decode(errors="replace")
    except gdb.error:
        return "?"


def large_objects():
    inf = gdb.selected_inferior()
    types = int(gdb.parse_and_eval("'runtime.firstmoduledata'")["types"])
    abi_type = gdb.lookup_type("internal/abi.Type")
    allspans = gdb.parse_and_eval("'runtime.mheap_'")["allspans"]
    by_class = collections.defaultdict(lambda: [0, 0, collections.Counter()])  # span bytes, objects, types
    for i in range(int(allspans["len"])):
        s = allspans["array"][i].dereference()
        spanclass, size = int(s["spanclass"]), int(s["elemsize"])
        # Only pointer-holding objects over 512 bytes carry their type: at
        # their start, or in the span for a large object (size class 0).
        if int(s["state"]["s"]["value"]) != 1 or spanclass & 1 or size <= 512:
            continue
        if spanclass >> 1 == 0:
            c = by_class[0]
            c[0] += int(s["npages"]) * 8192
            c[1] += size
            t = int(s["largeType"])
            c[2][type_name(inf, types, abi_type, t) if t else "?"] += 1
            continue
        base, n, free = int(s["startAddr"]), int(s["nelems"]), int(s["freeindex"])
        bits = inf.read_memory(int(s["allocBits"]), (n + 7) // 8).tobytes()
        c = by_class[spanclass >> 1]
        c[0] += int(s["npages"]) * 8192
        for k in range(n):
            # Below freeindex every slot is taken; above it, those the
            # last sweep found live.
            if k < free or bits[k // 8] >> (k % 8) & 1:
                t = int.from_bytes(inf.read_memory(base + k * size, 8).tobytes(), "little")
                c[1] += size
                c[2][type_name(inf, types, abi_type, t) if t else "?"] += 1
    print("objects over 512 bytes with pointers, by size class (most free room first):")
    for sc, (span_bytes, used, names) in sorted(by_class.items(), key=lambda kv: kv[1][1] - kv[1][0])[:15]:
        top = ", ".join("%d %s" % (v, k) for k, v in names.most_common(3))
        print("  size class %2d spans %6d objects %6d: %s" % (sc, span_bytes, used, top))


spans()
span_sets()
stacks()
resident()
large_objects()
