"""check_install.py PREFIX -- checks the library //:install put into PREFIX.

1. PREFIX/lib/librpma.so.0 carries no DWARF of its own and has a .gnu_debuglink that names
   librpma.so.0.debug with the CRC-32 of PREFIX/lib/.debug/librpma.so.0.debug (what gdb
   checks before it uses the file).
2. Every compilation unit of ours (api/ and sim/) in the debug file was compiled with -O2 or
   higher as its last -O option and with -g (GCC records the options in DW_AT_producer).
3. PREFIX/lib/librpma_sim_testing.a (the testing kit) holds the kit's objects alone, each
   compiled the same way and with -fPIC.
Prints what it found; exits 1 on the first broken expectation.
"""
import os
import re
import struct
import subprocess
import sys
import tempfile
import zlib


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def section_names(path):
    out = subprocess.run(["readelf", "-S", "-W", path], check=True, capture_output=True,
                         text=True).stdout
    return set(re.findall(r"\]\s+(\.\S+)", out))


def debuglink(path):
    """(file name, crc) of path's .gnu_debuglink section."""
    with tempfile.TemporaryDirectory() as tmp:
        dump = os.path.join(tmp, "link")
        subprocess.run(["objcopy", "--dump-section", ".gnu_debuglink=" + dump, path, os.devnull],
                       check=True)
        data = open(dump, "rb").read()
    name = data[:data.index(b"\0")].decode()
    (crc,) = struct.unpack("<I", data[-4:])
    return name, crc


def compilation_units(path):
    """(name, producer) of each compilation unit in path's DWARF."""
    out = subprocess.run(["readelf", "--debug-dump=info", "--dwarf-depth=1", path], check=True,
                         capture_output=True, text=True).stdout
    units = []
    for unit in out.split("Compilation Unit @")[1:]:
        producer = re.search(r"DW_AT_producer\s*:.*?\): (.*)", unit)
        name = re.search(r"DW_AT_name\s*:.*?\): (.*)", unit)
        if producer and name:
            units.append((name.group(1).strip(), producer.group(1).strip()))
    return units


def main():
    prefix = sys.argv[1]
    library = os.path.join(prefix, "lib", "librpma.so.0")
    symbols = os.path.join(prefix, "lib", ".debug", "librpma.so.0.debug")
    for path in (library, symbols):
        if not os.path.isfile(path):
            fail("%s was not installed" % path)

    sections = section_names(library)
    if ".debug_info" in sections:
        fail("the installed library still carries its debug information")
    if ".gnu_debuglink" not in sections:
        fail("the installed library has no .gnu_debuglink")
    name, crc = debuglink(library)
    actual = zlib.crc32(open(symbols, "rb").read()) & 0xFFFFFFFF
    if name != "librpma.so.0.debug" or crc != actual:
        fail(".gnu_debuglink says %s (crc %08x); the debug file's crc is %08x" %
             (name, crc, actual))
    print("librpma.so.0: stripped, .gnu_debuglink -> .debug/%s (crc %08x matches)" % (name, crc))

    ours = [(n, p) for n, p in compilation_units(symbols) if n.startswith(("api/", "sim/"))]
    if len(ours) < 20:
        fail("only %d compilation units of api/ and sim/ in the debug file" % len(ours))
    for unit, producer in ours:
        check_optimized(unit, producer)
    print("%d compilation units of api/ and sim/, every one compiled with -O2 and -g" % len(ours))

    archive = os.path.join(prefix, "lib", "librpma_sim_testing.a")
    if not os.path.isfile(archive):
        fail("%s was not installed" % archive)
    kit = compilation_units(archive)
    if len(kit) < 5 or any(not n.startswith("testing/") for n, _ in kit):
        fail("librpma_sim_testing.a holds %s, not the kit's objects alone" % [n for n, _ in kit])
    for unit, producer in kit:
        check_optimized(unit, producer)
        if not re.search(r"(?:^| )-fPIC(?= |$)", producer):
            fail("%s was compiled without -fPIC: %s" % (unit, producer))
    print("librpma_sim_testing.a: %d compilation units of testing/, each with -O2, -g and -fPIC" %
          len(kit))
    print("PASS")


def check_optimized(unit, producer):
    """Fails unless producer (DW_AT_producer) has -O2 or more as its last -O, and -g."""
    levels = re.findall(r"(?:^| )-O(\d|s|fast|g)?(?= |$)", producer)
    level = levels[-1] if levels else "0"
    if level not in ("2", "3", "fast"):
        fail("%s was compiled with -O%s: %s" % (unit, level or "1", producer))
    if not re.search(r"(?:^| )-g(?= |$)", producer):
        fail("%s was compiled without -g: %s" % (unit, producer))


if __name__ == "__main__":
    main()
