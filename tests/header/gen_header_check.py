#!/usr/bin/env python3
# Generates a C/C++ source that checks our librpma.h against the real (Debian) librpma.h.
"""Generate header_check.c: compile-time proof that our librpma.h equals the real one.

Usage:
  gen_header_check.py --real /usr/include/librpma.h --ours api/include/librpma.h \
      --expect-prototypes 84 --out header_check.c

The generated file is valid C11 and C++17. It first includes OUR librpma.h, then:
  * asserts every function of the real header is declared by ours (sizeof(&f) before any
    redeclaration, so a missing function is an "undeclared" error), then redeclares every real
    prototype verbatim (comments stripped, whitespace collapsed) inside extern "C": any
    difference is a "conflicting types" error (C) or "conflicting declaration of C function" (C++);
  * _Static_asserts every valued `#define RPMA_*` equal (and of the same type); non-integer
    constants (RPMA_LOG_USE_DEFAULT_FUNCTION is NULL) get a type check plus a run-time check;
  * _Static_asserts every enumerator of every enum equal to its value (implicit values computed
    here), that it belongs to the same enum (C++ only: in C enumerators are plain int), and that
    each enum has the size of a renamed verbatim copy of the real one;
  * redeclares every real typedef verbatim and compares it with a renamed copy;
  * compares sizeof/alignof/offsetof/member types of every real struct definition with a
    renamed verbatim copy.
The generator itself fails if the prototype count is not --expect-prototypes, or if our header
declares a function, macro, enum, enumerator, struct or typedef that the real one does not have
(or lacks one that it has).
"""

import argparse
import ast
import re
import sys


class HeaderError(Exception):
    pass


def strip_comments(text):
    """Removes /* */ and // comments, keeping string/char literals and line structure."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            end = text.find("*/", i + 2)
            if end < 0:
                raise HeaderError("unterminated comment")
            # keep newlines so preprocessor lines stay on their own lines
            out.append(" " + "\n" * text.count("\n", i, end + 2))
            i = end + 2
        elif text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def ws(s):
    return re.sub(r"\s+", " ", s).strip()


def split_top(text, sep):
    """Splits on sep at paren/brace/bracket depth 0."""
    parts, depth, cur = [], 0, []
    for ch in text:
        if ch in "({[":
            depth += 1
        elif ch in ")}]":
            depth -= 1
        if ch == sep and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return parts


class Header:
    def __init__(self, path):
        self.path = path
        self.prototypes = []  # (name, text)
        self.defines = []  # (name, value text)
        self.enums = []  # (enum name, [(enumerator, explicit value text or None)], text)
        self.structs = []  # (name, body text)
        self.forward_structs = []
        self.typedefs = []  # (name, text)
        with open(path) as f:
            text = f.read()
        self._parse(text)

    def _parse(self, text):
        text = text.replace("\\\n", " ")  # line continuations
        text = strip_comments(text)
        code = []
        active = []  # stack of booleans for #if blocks
        for line in text.split("\n"):
            s = line.strip()
            if s.startswith("#"):
                d = re.match(r"#\s*(\w+)\s*(.*)", s)
                if not d:
                    continue
                kw, rest = d.group(1), d.group(2).strip()
                if kw == "ifdef":
                    active.append(rest != "__cplusplus")  # the C view of the header
                elif kw == "ifndef":
                    active.append(True)  # include guard
                elif kw in ("if", "elif"):
                    raise HeaderError("%s: unsupported #%s %s" % (self.path, kw, rest))
                elif kw == "else":
                    active[-1] = not active[-1]
                elif kw == "endif":
                    active.pop()
                elif kw == "define" and all(active):
                    m = re.match(r"(\w+)(\(?)\s*(.*)", rest)
                    name, fn, value = m.group(1), m.group(2), m.group(3).strip()
                    if name.startswith("RPMA_") and value and not fn:
                        self.defines.append((name, value))
                    elif name.startswith("RPMA_"):
                        raise HeaderError("%s: unsupported macro %s" % (self.path, s))
                continue
            if all(active):
                code.append(line)
        if active:
            raise HeaderError("%s: unbalanced #if" % self.path)
        for stmt in split_top("\n".join(code), ";"):
            self._classify(ws(stmt))

    def _classify(self, s):
        if not s:
            return
        if s.startswith("typedef "):
            m = (re.match(r"typedef [^(]*\( ?\* ?(\w+) ?\) ?\(", s)  # function pointer
                 or re.match(r"typedef [^(]*?(\w+) ?\(", s)  # function type
                 or re.fullmatch(r"typedef .*?(\w+) ?(?:\[[^\]]*\] ?)*", s))
            if not m:
                raise HeaderError("%s: cannot parse typedef %r" % (self.path, s))
            self.typedefs.append((m.group(1), s))
            return
        m = re.fullmatch(r"enum (\w+) ?\{(.*)\}", s)
        if m:
            items = []
            for e in split_top(m.group(2), ","):
                e = e.strip()
                if not e:
                    continue  # trailing comma
                em = re.fullmatch(r"(\w+)(?: ?= ?(.+))?", e)
                if not em:
                    raise HeaderError("%s: bad enumerator %r" % (self.path, e))
                items.append((em.group(1), em.group(2)))
            self.enums.append((m.group(1), items, s))
            return
        m = re.fullmatch(r"struct (\w+) ?\{(.*)\}", s)
        if m:
            self.structs.append((m.group(1), m.group(2)))
            return
        m = re.fullmatch(r"struct (\w+)", s)
        if m:
            self.forward_structs.append(m.group(1))
            return
        m = re.match(r"[\w\s\*]*?\b(\w+) ?\(", s)
        if m and "{" not in s and m.group(1).startswith("rpma_"):
            self.prototypes.append((m.group(1), s))
            return
        raise HeaderError("%s: cannot classify declaration: %r" % (self.path, s))


_OPS = {
    ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
    ast.LShift: lambda a, b: a << b, ast.RShift: lambda a, b: a >> b,
    ast.BitOr: lambda a, b: a | b, ast.BitAnd: lambda a, b: a & b, ast.BitXor: lambda a, b: a ^ b,
}


def c_int_eval(expr, names):
    """Evaluates a simple integer C constant expression, or returns None."""
    py = re.sub(r"\b(0[xX][0-9a-fA-F]+|\d+)[uUlL]*\b", r"\1", expr)
    try:
        tree = ast.parse(py, mode="eval").body
    except SyntaxError:
        return None

    def ev(node):
        if isinstance(node, ast.Constant) and type(node.value) is int:
            return node.value
        if isinstance(node, ast.Name) and node.id in names:
            return names[node.id]
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd, ast.Invert)):
            v = ev(node.operand)
            return -v if isinstance(node.op, ast.USub) else (~v if isinstance(node.op, ast.Invert) else v)
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            return _OPS[type(node.op)](ev(node.left), ev(node.right))
        raise ValueError(ast.dump(node))

    try:
        return ev(tree)
    except (ValueError, KeyError):
        return None


def rename(text, name):
    return re.sub(r"\b%s\b" % re.escape(name), "hc_real_" + name, text)


def member_names(body):
    names = []
    for decl in split_top(body, ";"):
        decl = ws(decl)
        if not decl:
            continue
        m = re.search(r"(\w+) ?(?:\[[^\]]*\] ?)*(?:: ?\w+)?$", decl)
        if not m:
            raise HeaderError("cannot parse struct member %r" % decl)
        names.append(m.group(1))
    return names


def compare_names(real, ours):
    problems = []
    kinds = [
        ("function", [n for n, _ in real.prototypes], [n for n, _ in ours.prototypes]),
        ("macro", [n for n, _ in real.defines], [n for n, _ in ours.defines]),
        ("enum", [n for n, _, _ in real.enums], [n for n, _, _ in ours.enums]),
        ("enumerator", [e for _, it, _ in real.enums for e, _ in it],
         [e for _, it, _ in ours.enums for e, _ in it]),
        ("struct definition", [n for n, _ in real.structs], [n for n, _ in ours.structs]),
        ("struct", real.forward_structs + [n for n, _ in real.structs],
         ours.forward_structs + [n for n, _ in ours.structs]),
        ("typedef", [n for n, _ in real.typedefs], [n for n, _ in ours.typedefs]),
    ]
    for kind, r, o in kinds:
        for n in sorted(set(o) - set(r)):
            problems.append("our header has %s %s, the real one does not" % (kind, n))
        for n in sorted(set(r) - set(o)):
            problems.append("our header lacks %s %s" % (kind, n))
        for n in sorted({x for x in o if o.count(x) > 1}):
            problems.append("our header declares %s %s more than once" % (kind, n))
    return problems


PREAMBLE = """\
/* GENERATED by tests/header/gen_header_check.py from %(real)s -- do not edit. */
#include "librpma.h"

#include <stddef.h>

#ifdef __cplusplus
#include <type_traits>
#define HC_STATIC_ASSERT(cond, msg) static_assert(cond, msg)
#define HC_TYPEOF(x) decltype(x)
#define HC_SAME_TYPE(a, b) (std::is_same<a, b>::value)
#define HC_ALIGNOF(t) alignof(t)
/* in C++ an enumerator has the type of its enum */
#define HC_ENUMERATOR_OF(e, x) \\
	HC_STATIC_ASSERT((std::is_same<decltype(x), enum e>::value), #x " is not in enum " #e)
#define HC_LANG(name) name##_cxx
extern "C" {
#else
#define HC_STATIC_ASSERT(cond, msg) _Static_assert(cond, msg)
#define HC_TYPEOF(x) __typeof__(x)
#define HC_SAME_TYPE(a, b) __builtin_types_compatible_p(a, b)
#define HC_ALIGNOF(t) _Alignof(t)
#define HC_ENUMERATOR_OF(e, x) HC_STATIC_ASSERT(1, "")
#define HC_LANG(name) name##_c
#endif
"""


def generate(real, expect_prototypes):
    out = [PREAMBLE % {"real": real.path}]
    emit = out.append

    emit("/* 1. every real function is declared by our header (before any redeclaration) */")
    for name, _ in real.prototypes:
        emit('HC_STATIC_ASSERT(sizeof(&%s) != 0, "%s is not declared by our librpma.h");'
             % (name, name))
    emit("")
    emit("/* 2. the %d prototypes of the real header, verbatim: a mismatch is a conflict */"
         % len(real.prototypes))
    for _, text in real.prototypes:
        emit(text + ";")
    emit("")

    emit("/* 3. typedefs: verbatim redeclaration plus a renamed copy compared by type */")
    for name, text in real.typedefs:
        emit(text + ";")
        emit(rename(text, name) + ";")
        emit('HC_STATIC_ASSERT(HC_SAME_TYPE(%s, hc_real_%s), "typedef %s differs");'
             % (name, name, name))
    emit("")

    emit("/* 4. struct layouts: renamed verbatim copy, compared member by member */")
    for name, body in real.structs:
        emit("struct hc_real_%s {%s};" % (name, body))
        ours_t, real_t = "struct " + name, "struct hc_real_" + name
        for what, label in (("sizeof", "size"), ("HC_ALIGNOF", "alignment")):
            emit('HC_STATIC_ASSERT(%s(%s) == %s(%s), "%s of %s differs");'
                 % (what, ours_t, what, real_t, label, ours_t))
        for m in member_names(body):
            emit('HC_STATIC_ASSERT(offsetof(%s, %s) == offsetof(%s, %s), "offsetof %s.%s");'
                 % (ours_t, m, real_t, m, name, m))
            emit('HC_STATIC_ASSERT(HC_SAME_TYPE(HC_TYPEOF(((%s *)0)->%s), '
                 'HC_TYPEOF(((%s *)0)->%s)), "type of %s.%s");'
                 % (ours_t, m, real_t, m, name, m))
    emit("")

    emit("/* 5. constants: every valued #define RPMA_* of the real header */")
    values = {}
    runtime = []
    for name, value in real.defines:
        emit("#ifndef %s" % name)
        emit("#error %s is not a macro in our librpma.h" % name)
        emit("#endif")
        emit('HC_STATIC_ASSERT(HC_SAME_TYPE(HC_TYPEOF((%s)), HC_TYPEOF((%s))), '
             '"type of %s");' % (name, value, name))
        v = c_int_eval(value, values)
        if v is not None:
            values[name] = v
            emit('HC_STATIC_ASSERT((%s) == (%s), "%s != %s");'
                 % (name, value, name, value.replace('"', '\\"')))
        else:
            runtime.append((name, value))  # not an integer constant expression (NULL)
    emit("")

    emit("/* 6. enums: every enumerator, implicit values computed by the generator */")
    n_enumerators = 0
    for ename, items, text in real.enums:
        copy = text
        for e, _ in items:
            copy = rename(copy, e)
        emit(rename(copy, ename) + ";")
        emit('HC_STATIC_ASSERT(sizeof(enum %s) == sizeof(enum hc_real_%s), "size of enum %s");'
             % (ename, ename, ename))
        nxt = None  # (value, expr) of the next implicit enumerator
        for e, explicit in items:
            if explicit is not None:
                v = c_int_eval(explicit, values)
                expr = str(v) if v is not None else "(%s)" % explicit
            elif nxt is None:
                v, expr = 0, "0"
            else:
                v, expr = nxt
            values[e] = v
            nxt = (v + 1, str(v + 1)) if v is not None else (None, "(%s) + 1" % expr)
            emit('HC_STATIC_ASSERT((%s) == (%s), "%s != %s");' % (e, expr, e, expr))
            emit('HC_STATIC_ASSERT((hc_real_%s) == (%s), "generator computed %s wrongly");'
                 % (e, expr, e))
            emit("HC_ENUMERATOR_OF(%s, %s);" % (ename, e))
            n_enumerators += 1
    emit("")

    emit("/* 7. counts and run-time checks, called by header_check_test.cc */")
    emit("int HC_LANG(hc_prototypes)(void) { return %d; }" % len(real.prototypes))
    emit("int HC_LANG(hc_constants)(void) { return %d; }" % len(real.defines))
    emit("int HC_LANG(hc_enumerators)(void) { return %d; }" % n_enumerators)
    emit("int HC_LANG(hc_runtime_failures)(void)\n{\n\tint failures = 0;")
    for name, value in runtime:
        emit("\tif (!((%s) == (%s)))\n\t\tfailures++;" % (name, value))
    emit("\treturn failures;\n}")
    emit("#ifdef __cplusplus\n}\n#endif")
    return "\n".join(out) + "\n", n_enumerators, len(runtime)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--real", required=True, help="the real librpma.h")
    ap.add_argument("--ours", required=True, help="our librpma.h")
    ap.add_argument("--expect-prototypes", type=int, required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    try:
        real, ours = Header(args.real), Header(args.ours)
    except (OSError, HeaderError) as e:
        sys.exit("gen_header_check: %s" % e)
    problems = []
    if len(real.prototypes) != args.expect_prototypes:
        problems.append("extracted %d prototypes from %s, expected %d"
                        % (len(real.prototypes), args.real, args.expect_prototypes))
    problems += compare_names(real, ours)
    if problems:
        sys.exit("gen_header_check: FAILED\n  " + "\n  ".join(problems))
    text, n_enum, n_runtime = generate(real, args.expect_prototypes)
    with open(args.out, "w") as f:
        f.write(text)
    print("gen_header_check: %d prototypes, %d constants (%d checked at run time), "
          "%d enumerators in %d enums, %d typedefs, %d structs"
          % (len(real.prototypes), len(real.defines), n_runtime, n_enum, len(real.enums),
             len(real.typedefs), len(real.structs)), file=sys.stderr)


if __name__ == "__main__":
    main()
