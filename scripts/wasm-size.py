#!/usr/bin/env python3
"""What the page's first download is made of, from the name section the split build keeps until
wasm-opt (`target/web-split/split/main.wasm` after `trunk build --release`).

  scripts/wasm-size.py modules [WASM]        code bytes by module (mqviz's own by module path)
  scripts/wasm-size.py functions [WASM] [N]  the N largest functions
  scripts/wasm-size.py refs PATTERN [WASM]   functions that take a matching function's table index:
                                             fn pointers and `fmt::Arguments`, which no call shows
                                             (how the float formatting's users were found)

Sizes are before wasm-opt and gzip; compare them with each other, not with the budget. `refs`
needs `wasm-dis` (binaryen); names are demangled with `llvm-cxxfilt` when it is on PATH.
"""
import collections
import re
import shutil
import subprocess
import sys

DEFAULT = 'target/web-split/split/main.wasm'


def leb(b, i):
    r = s = 0
    while True:
        x = b[i]
        i += 1
        r |= (x & 0x7F) << s
        s += 7
        if x < 0x80:
            return r, i


def demangle(names):
    if not shutil.which('llvm-cxxfilt'):
        return list(names)
    out = subprocess.run(['llvm-cxxfilt'], input='\n'.join(names), capture_output=True, text=True).stdout
    return out.split('\n')[: len(names)]


def tidy(n):
    for a, b in [('$LT$', '<'), ('$GT$', '>'), ('$u20$', ' '), ('$u7b$', '{'), ('$u7d$', '}'), ('$C$', ','),
                 ('..', '::'), ('$RF$', '&'), ('$BP$', '*'), ('$u5b$', '['), ('$u5d$', ']'), ('$u27$', "'")]:
        n = n.replace(a, b)
    return re.sub(r'::h[0-9a-f]{16}$', '', n)


def functions(path):
    """(code bytes, demangled name) of every function body, largest first."""
    data = open(path, 'rb').read()
    i, imports, bodies, names = 8, 0, [], {}
    while i < len(data):
        sid = data[i]
        n, i = leb(data, i + 1)
        b, i = data[i:i + n], i + n
        if sid == 2:  # imports: function indices start after the imported functions
            count, j = leb(b, 0)
            for _ in range(count):
                for _ in range(2):
                    l, j = leb(b, j)
                    j += l
                kind, j = b[j], j + 1
                if kind == 0:
                    _, j = leb(b, j)
                    imports += 1
                elif kind in (1, 2):
                    j += kind == 1
                    flags, j = b[j], j + 1
                    _, j = leb(b, j)
                    if flags & 1:
                        _, j = leb(b, j)
                elif kind == 3:
                    j += 2
                elif kind == 4:
                    j += 1
                    _, j = leb(b, j)
        elif sid == 10:
            count, j = leb(b, 0)
            for _ in range(count):
                l, j = leb(b, j)
                bodies.append(l)
                j += l
        elif sid == 0:
            l, j = leb(b, 0)
            if b[j:j + l] != b'name':
                continue
            j += l
            while j < len(b):
                kind = b[j]
                size, j = leb(b, j + 1)
                end = j + size
                if kind == 1:
                    count, j = leb(b, j)
                    for _ in range(count):
                        idx, j = leb(b, j)
                        l, j = leb(b, j)
                        names[idx] = b[j:j + l].decode('utf8', 'replace')
                        j += l
                j = end
    raw = [names.get(k + imports, f'f{k + imports}') for k in range(len(bodies))]
    return sorted(zip(bodies, (tidy(n) for n in demangle(raw))), reverse=True)


def module_of(name):
    m = re.search(r'mqviz(?:_sim|_base)?::(?:ui::)?[a-z_0-9]+(?:::[a-z_0-9]+)?', name)
    if m:
        return m.group(0)
    for key, pattern in [('ordered maps (btree)', 'btree'), ('leptos', r'reactive_graph|tachys|leptos|any_spawner'),
                         ('serde_json', 'serde_json'), ('serde', 'serde'), ('core::fmt', 'core::fmt'),
                         ('core', 'core::'), ('alloc', 'alloc::')]:
        if re.search(pattern, name):
            return key
    return 'other: ' + name[:40]


def refs(pattern, path):
    wat = subprocess.run(['wasm-dis', path], capture_output=True, text=True).stdout.split('\n')
    table = {}
    for line in wat:
        m = re.match(r'\s*\(elem \$0 \(i32\.const (\d+)\) (.*)\)$', line)
        if m:
            entries = re.findall(r'\$(?:"([^"]+)"|(\S+))', m.group(2))
            table = {int(m.group(1)) + k: (a or b).replace(' local_shim', '') for k, (a, b) in enumerate(entries)}
            break
    slots = list(table)
    wanted = {s for s, n in zip(slots, demangle([table[s] for s in slots])) if re.search(pattern, n)}
    hits, current = collections.defaultdict(set), None
    for line in wat:
        m = re.match(r'\s*\(func \$(\S+)', line)
        if m:
            current = m.group(1)
            continue
        for c in re.findall(r'i32\.const (\d+)\)', line):
            if int(c) in wanted:
                hits[current].add(int(c))
    # An i32.const that happens to equal a slot is a false positive: read the function to be sure.
    for name, found in zip(demangle(list(hits)), hits.values()):
        print(tidy(name)[:160], sorted(found))


def main(args):
    what = args[0] if args else 'modules'
    if what == 'refs':
        return refs(args[1], args[2] if len(args) > 2 else DEFAULT)
    rows = functions(args[1] if len(args) > 1 else DEFAULT)
    if what == 'functions':
        for size, name in rows[: int(args[2]) if len(args) > 2 else 60]:
            print(size, name[:160])
    else:
        total = collections.Counter()
        for size, name in rows:
            total[module_of(name)] += size
        print(sum(s for s, _ in rows), 'bytes of code in', len(rows), 'functions')
        for module, size in total.most_common(60):
            print(size, module)


if __name__ == '__main__':
    main(sys.argv[1:])
