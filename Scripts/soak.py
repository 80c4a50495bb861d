#!/usr/bin/env python3
"""Soak test of `notes serve` (issue #16): not part of `make test`; run it with `make soak`.

100,000 requests mixing reads and writes over 1,000 notes, with the CLI (`notes edit`) and the
shell (`mv` there and back, `cp -r` of a note and `rm -rf` of the copy) changing the library
beside them, and two event streams listening. It fails (exit 1) on any 5xx, on an acknowledged
write that is lost (every PUT appends a line of its own; every line acknowledged must be in the
note at the end), when resident memory (VmRSS), or the part of it the server owns (RssAnon: heap
and stacks, not the pages of its program and libraries), grows by more than 10% after warm-up, or when the
server's descriptors and threads (its own: GCD's workers, which libdispatch adds and retires as it
sees fit, are only reported) don't return to where they were after warm-up once it is idle.

The warm-up runs rounds of 5,000 requests of the same mix until one grew the server's idle RssAnon by at most
2% (at least two rounds, at most 50,000 requests): the server's caches, each bounded, then hold the working set
(the notes' responses, their versions' records, the event journal). The 100,000 requests are measured after it.

Usage: Scripts/soak.py --notes-binary PATH [--notes 1000] [--requests 100000] [--clients 8] [--dump DIR]
                       [--warm-round 5000] [--warm-max 50000] [--settle 0.02]

`--dump DIR` keeps, for the sample after warm-up and the one at the end, the server's
`/proc/PID/smaps` and glibc's `malloc_info` (through `gdb`, when it is installed): where growth is.
"""
import argparse, http.client, json, os, random, shutil, signal, subprocess, sys, tempfile, threading, time

# Idle seconds before a memory sample: more than `notes serve`'s memory trim period (5 s).
IDLE_SAMPLE_SECONDS = 7

def proc_stats(pid):
    fields = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(("VmRSS:", "RssAnon:", "RssFile:")):
                fields[line.split(":")[0]] = int(line.split()[1])
    fds = len(os.listdir(f"/proc/{pid}/fd"))
    # GCD's worker threads (Swift's cooperative pool runs on them) come and go with the load, as
    # libdispatch decides; every other thread is the server's own and must come back.
    threads = gcd = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/comm") as f:
                name = f.read().strip()
        except OSError:
            continue
        threads += 1
        if name.endswith("-qos") or "qos.overcommit" in name:
            gcd += 1
    # anon_kib: the memory the process owns (heap, stacks); file_kib: pages of its program and
    # libraries that are resident (clean, shared, given back under pressure; they grow as more of
    # the code runs, up to the size of the files).
    return {"rss_kib": fields["VmRSS"], "anon_kib": fields["RssAnon"], "file_kib": fields["RssFile"], "fds": fds,
            "threads": threads - gcd, "gcd_threads": gcd}

def dump(pid, folder, label):
    """Keeps the server's memory map and glibc's per-arena statistics as `folder/label.*`."""
    os.makedirs(folder, exist_ok=True)
    with open(f"/proc/{pid}/smaps") as source, open(os.path.join(folder, label + ".smaps"), "w") as target:
        target.write(source.read())
    if shutil.which("gdb"):
        path = os.path.join(folder, label + ".malloc.xml")
        subprocess.run(["gdb", "-p", str(pid), "-batch", "-nx",
                        "-ex", f'set $f = (void *) fopen("{path}", "w")',
                        "-ex", "call (int) malloc_info(0, $f)", "-ex", "call (int) fclose($f)"],
                       capture_output=True, timeout=120)

class Client:
    def __init__(self, port):
        self.port = port
        self.connection = None

    def request(self, method, path, body=None, headers=None):
        for attempt in range(3):
            try:
                if self.connection is None:
                    self.connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
                data = json.dumps(body).encode() if body is not None else None
                h = dict(headers or {})
                if data is not None:
                    h["Content-Type"] = "application/json"
                self.connection.request(method, path, body=data, headers=h)
                response = self.connection.getresponse()
                payload = response.read()
                return response.status, dict((k.lower(), v) for k, v in response.getheaders()), payload
            except (ConnectionError, http.client.HTTPException, OSError):
                self.connection = None
                if attempt == 2:
                    raise
        raise RuntimeError("unreachable")

def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--notes-binary", required=True)
    parser.add_argument("--notes", type=int, default=1000)
    parser.add_argument("--requests", type=int, default=100_000, help="requests measured after the warm-up")
    parser.add_argument("--warm-round", type=int, default=5_000, help="requests per round of warm-up")
    parser.add_argument("--warm-max", type=int, default=50_000, help="the warm-up stops after this many requests, settled or not")
    parser.add_argument("--settle", type=float, default=0.02,
                        help="the warm-up ends when a round grew the idle RssAnon by at most this fraction")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--keep", action="store_true")
    parser.add_argument("--dump", help="keep smaps and malloc_info of both memory samples in this folder")
    args = parser.parse_args()

    work = tempfile.mkdtemp(prefix="notes-soak-")
    library = os.path.join(work, "library")
    env = dict(os.environ, NOTES_INDEX_CACHE=os.path.join(work, "cache"), NOTES_LIBRARY=library)
    env.pop("NOTES_LOG_LEVEL", None)
    notes = args.notes_binary
    subprocess.run([notes, "init"], env=env, check=True, capture_output=True)
    server = subprocess.Popen([notes, "serve", "--port", "0"], env=env, stderr=subprocess.PIPE, text=True)
    port = None
    line = server.stderr.readline()
    if "http://127.0.0.1:" in line:
        port = int(line.rsplit(":", 1)[1])
    if port is None:
        print("soak: notes serve did not start:", line, file=sys.stderr)
        return 1
    threading.Thread(target=lambda: [None for _ in server.stderr], daemon=True).start()
    failures = []
    statuses = {}
    lock = threading.Lock()
    acknowledged = {}   # id -> list of lines
    ids = []
    titles = {}

    def count(status):
        with lock:
            statuses[status] = statuses.get(status, 0) + 1
            if status >= 500:
                failures.append(f"a {status}")

    setup = Client(port)
    started = time.time()
    for index in range(args.notes):
        title = f"Soak note {index}"
        status, headers, payload = setup.request("POST", "/api/notes", {"title": title, "body": "start\n"})
        if status != 201:
            print(f"soak: POST gave {status}: {payload[:200]}", file=sys.stderr)
            return 1
        note = json.loads(payload)
        ids.append(note["id"])
        titles[note["id"]] = title
    print(f"soak: {args.notes} notes created in {time.time() - started:.1f} s", flush=True)

    # Event streams: two listeners, reconnecting with Last-Event-ID, as a browser would.
    stop = threading.Event()
    events_seen = [0]
    def listen():
        last = None
        while not stop.is_set():
            try:
                connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
                headers = {"Last-Event-ID": last} if last else {}
                connection.request("GET", "/api/events", headers=headers)
                response = connection.getresponse()
                count(response.status)
                while not stop.is_set():
                    raw = response.fp.readline()
                    if not raw:
                        break
                    text = raw.decode()
                    if text.startswith("id:"):
                        last = text[3:].strip()
                    if text.startswith("event:"):
                        with lock:
                            events_seen[0] += 1
                connection.close()
            except (OSError, http.client.HTTPException):
                time.sleep(0.2)
    listeners = [threading.Thread(target=listen, daemon=True) for _ in range(2)]
    for listener in listeners:
        listener.start()

    remaining = [args.requests]
    def take():
        with lock:
            if remaining[0] <= 0:
                return False
            remaining[0] -= 1
            return True

    def append(client, note_id, line):
        for _ in range(10):
            status, headers, payload = client.request("GET", f"/api/notes/{note_id}")
            count(status)
            if status != 200:
                return
            body = json.loads(payload)["body"]
            status, headers, payload = client.request(
                "PUT", f"/api/notes/{note_id}", {"body": body + line + "\n"}, {"If-Match": headers["etag"]})
            count(status)
            if status == 200:
                with lock:
                    acknowledged.setdefault(note_id, []).append(line)
                return
            if status not in (412, 404, 409, 503):
                failures.append(f"PUT gave {status}: {payload[:200]}")
                return

    def worker(number):
        client = Client(port)
        rng = random.Random(number)
        tags = {}
        n = 0
        while take():
            n += 1
            note_id = rng.choice(ids)
            roll = rng.random()
            if roll < 0.55:
                status, headers, _ = client.request("GET", f"/api/notes/{note_id}")
                count(status)
                if status == 200:
                    tags[note_id] = headers.get("etag")
            elif roll < 0.70 and note_id in tags:
                status, _, _ = client.request("GET", f"/api/notes/{note_id}", headers={"If-None-Match": tags[note_id]})
                count(status)
            elif roll < 0.78:
                status, _, _ = client.request("GET", "/api/notes?limit=50")
                count(status)
            else:
                append(client, note_id, f"w{number}-{n}")

    def cli_and_shell():
        rng = random.Random(99)
        n = 0
        while not stop.is_set():
            n += 1
            note_id = rng.choice(ids)
            result = subprocess.run([notes, "edit", titles[note_id], "--append", f"cli-{n}"], env=env, capture_output=True)
            if result.returncode == 0:
                with lock:
                    acknowledged.setdefault(note_id, []).append(f"cli-{n}")
            # The shell: a note renamed away and back, a copy made and removed.
            name = "soak-note-" + str(rng.randrange(args.notes)) + ".note"
            source = os.path.join(library, name)
            if os.path.exists(source):
                moved = os.path.join(library, "moved-by-shell.note")
                subprocess.run(["mv", source, moved])
                time.sleep(0.05)
                subprocess.run(["mv", moved, source])
                copy = os.path.join(library, "copy-by-shell.note")
                subprocess.run(["cp", "-r", source, copy])
                time.sleep(0.05)
                subprocess.run(["rm", "-rf", copy])
            time.sleep(0.2)

    # Warm-up, with the CLI and the shell already beside the requests (the same mix as after it:
    # what their first use allocates once is not growth): rounds of requests until the server's
    # idle memory settles (its caches, each bounded, hold the working set: the library's notes,
    # their versions' records), then the baseline. A leak never settles: the warm-up then stops
    # at its limit and the measured requests show the growth.
    side = threading.Thread(target=cli_and_shell, daemon=True)
    side.start()
    def run(count, first_worker):
        remaining[0] = count
        workers = [threading.Thread(target=worker, args=(first_worker + i,)) for i in range(args.clients)]
        for w in workers: w.start()
        for w in workers: w.join()
        # Samples are taken idle for longer than the server's memory trim period (5 s), so that
        # each follows a trim: one taken just before it would count garbage the trim gives back.
        time.sleep(IDLE_SAMPLE_SECONDS)
        return proc_stats(server.pid)
    warm = 0
    baseline = None
    while True:
        sample = run(args.warm_round, 1000 + warm)
        warm += args.warm_round
        settled = baseline is not None and sample["anon_kib"] - baseline["anon_kib"] <= baseline["anon_kib"] * args.settle
        print(f"soak: warm-up, {warm} requests: {sample}", flush=True)
        baseline = sample
        if (settled and warm >= 2 * args.warm_round) or warm >= args.warm_max:
            break
    total = args.requests + warm
    if args.dump:
        dump(server.pid, args.dump, "baseline")
    print(f"soak: after warm-up ({warm} requests): {baseline}", flush=True)

    remaining[0] = total - warm
    started = time.time()
    workers = [threading.Thread(target=worker, args=(100 + i,)) for i in range(args.clients)]
    peak = dict(baseline)
    for w in workers: w.start()
    last_report = time.time()
    while any(w.is_alive() for w in workers):
        time.sleep(1)
        now = proc_stats(server.pid)
        for key in peak: peak[key] = max(peak[key], now[key])
        if time.time() - last_report >= 30:
            last_report = time.time()
            with lock:
                done = total - warm - remaining[0]
            print(f"soak: {done} of {total - warm} requests, {now}", flush=True)
    elapsed = time.time() - started
    stop.set()
    side.join(timeout=30)
    for listener in listeners: listener.join(timeout=35)
    # Idle: threads that served the load (GCD's workers, which it retires after a few idle
    # seconds) and connections that close may take a moment; wait up to 30 s for them.
    deadline = time.time() + 30
    idle_since = time.time()
    while True:
        time.sleep(3)
        end = proc_stats(server.pid)
        returned = end["fds"] <= baseline["fds"] and end["threads"] <= baseline["threads"]
        if (returned and time.time() - idle_since >= IDLE_SAMPLE_SECONDS) or time.time() > deadline:
            break
    print(f"soak: {total - warm} requests in {elapsed:.1f} s ({(total - warm) / elapsed:.0f}/s); statuses {dict(sorted(statuses.items()))}; "
          f"{events_seen[0]} events heard; peak {peak}; idle after: {end}", flush=True)

    if args.dump:
        dump(server.pid, args.dump, "end")
    # Neither all its resident memory nor the part the process owns (a leak, a cache without
    # bound would show there first) may grow by more than 10%.
    growth = (end["anon_kib"] - baseline["anon_kib"]) / baseline["anon_kib"]
    rss_growth = (end["rss_kib"] - baseline["rss_kib"]) / baseline["rss_kib"]
    if rss_growth > 0.10:
        failures.append(f"resident memory grew {rss_growth:.1%} after warm-up ({baseline['rss_kib']} → {end['rss_kib']} KiB)")
    if growth > 0.10:
        failures.append(f"the server's own memory grew {growth:.1%} after warm-up ({baseline['anon_kib']} → {end['anon_kib']} KiB)")
    if end["fds"] > baseline["fds"]:
        failures.append(f"descriptors did not return: {baseline['fds']} → {end['fds']}")
    if end["threads"] > baseline["threads"]:
        failures.append(f"threads did not return: {baseline['threads']} → {end['threads']}")

    # Every acknowledged line is in its note.
    checker = Client(port)
    lost = 0
    for note_id, lines in acknowledged.items():
        status, _, payload = checker.request("GET", f"/api/notes/{note_id}")
        if status != 200:
            failures.append(f"note {note_id}: GET gave {status} at the end")
            continue
        body = json.loads(payload)["body"]
        for line in lines:
            if line + "\n" not in body:
                lost += 1
                print(f"soak: lost: note {note_id} ({titles[note_id]}) lacks the acknowledged line {line!r}", flush=True)
    if lost:
        failures.append(f"{lost} acknowledged writes lost")
    print(f"soak: {sum(len(v) for v in acknowledged.values())} acknowledged writes checked, {lost} lost; own memory (RssAnon) {growth:+.1%}, all resident (VmRSS) {rss_growth:+.1%}", flush=True)

    server.send_signal(signal.SIGTERM)
    try:
        code = server.wait(timeout=30)
    except subprocess.TimeoutExpired:
        server.kill()
        code = "hung"
    if code != 0:
        failures.append(f"notes serve exited {code} on SIGTERM")
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    if failures:
        print("soak: FAILED:\n  " + "\n  ".join(failures[:20]), file=sys.stderr)
        return 1
    print("soak: passed")
    return 0

if __name__ == "__main__":
    sys.exit(main())
