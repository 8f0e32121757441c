"""Reads protoc's text output (protoc --decode perfetto.protos.Trace) into
lists and dicts: every message is a dict of field -> list of values (a
nested message is a dict). Used by t0970-export.sh."""
import sys


def parse(lines):
    stack = [{}]
    for line in lines:
        s = line.strip()
        if not s:
            continue
        if s == '}':
            stack.pop()
        elif s.endswith('{'):
            d = {}
            stack[-1].setdefault(s[:-1].strip(), []).append(d)
            stack.append(d)
        else:
            k, v = s.split(':', 1)
            v = v.strip()
            if v.startswith('"'):
                v = bytes(v[1:-1], 'utf-8').decode('unicode_escape')
            elif v in ('true', 'false'):
                v = v == 'true'
            elif v.lstrip('-').isdigit():
                v = int(v)
            stack[-1].setdefault(k.strip(), []).append(v)
    return stack[0].get('packet', [])


def one(d, k, default=None):
    v = d.get(k)
    return v[0] if v else default


def load(path):
    with open(path) as f:
        return parse(f)


if __name__ == '__main__':
    print(len(load(sys.argv[1])), 'packets')
