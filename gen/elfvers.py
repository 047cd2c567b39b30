# SPDX-License-Identifier: MIT
"""The symbol versions a real shared object defines, read with libelf
(elfutils' libelf.so.1, through ctypes: the library the project already
depends on, so generation needs nothing new).

What is read is what a program linked against the library records and
the dynamic linker checks: the version definitions (.gnu.version_d: each
node's name and the nodes it inherits from) and, for every defined dynamic
symbol, the node it is defined under and whether that is its default
version (name@@NODE) or a hidden one (name@NODE). References to other
libraries' nodes (.gnu.version_r: libcublas.so.13 needs libcublasLt.so.13's)
are not definitions and are not read.
"""

import ctypes
import ctypes.util
import os
import re
from dataclasses import dataclass, field

from spec import GenError

# <libelf.h>, <elf.h>: the values the reader needs (a stable ABI since 1998).
_EV_CURRENT, _ELF_C_READ, _ELF_K_ELF = 1, 1, 3
_SHT_DYNSYM, _SHT_DYNAMIC = 11, 6
_SHT_GNU_VERDEF, _SHT_GNU_VERSYM = 0x6FFFFFFD, 0x6FFFFFFF
_SHN_UNDEF, _SHN_ABS = 0, 0xFFF1
_STT_NOTYPE, _SHF_EXECINSTR, _SHN_LORESERVE = 0, 0x4, 0xFF00
_DT_SONAME, _DT_NULL, _DT_NEEDED = 14, 0, 1
_VER_FLG_BASE, _VERSYM_HIDDEN = 1, 0x8000
_STT_OBJECT, _STT_FUNC, _STT_TLS, _STT_GNU_IFUNC = 1, 2, 6, 10
_STB_WEAK, _STB_GNU_UNIQUE = 2, 10


class _Ehdr(ctypes.Structure):
    _fields_ = [("e_ident", ctypes.c_ubyte * 16), ("e_type", ctypes.c_uint16),
                ("e_machine", ctypes.c_uint16), ("e_version", ctypes.c_uint32),
                ("e_entry", ctypes.c_uint64), ("e_phoff", ctypes.c_uint64),
                ("e_shoff", ctypes.c_uint64), ("e_flags", ctypes.c_uint32),
                ("e_ehsize", ctypes.c_uint16), ("e_phentsize", ctypes.c_uint16),
                ("e_phnum", ctypes.c_uint16), ("e_shentsize", ctypes.c_uint16),
                ("e_shnum", ctypes.c_uint16), ("e_shstrndx", ctypes.c_uint16)]


class _Shdr(ctypes.Structure):
    _fields_ = [("sh_name", ctypes.c_uint32), ("sh_type", ctypes.c_uint32),
                ("sh_flags", ctypes.c_uint64), ("sh_addr", ctypes.c_uint64),
                ("sh_offset", ctypes.c_uint64), ("sh_size", ctypes.c_uint64),
                ("sh_link", ctypes.c_uint32), ("sh_info", ctypes.c_uint32),
                ("sh_addralign", ctypes.c_uint64), ("sh_entsize", ctypes.c_uint64)]


class _Sym(ctypes.Structure):
    _fields_ = [("st_name", ctypes.c_uint32), ("st_info", ctypes.c_ubyte),
                ("st_other", ctypes.c_ubyte), ("st_shndx", ctypes.c_uint16),
                ("st_value", ctypes.c_uint64), ("st_size", ctypes.c_uint64)]


class _Dyn(ctypes.Structure):
    _fields_ = [("d_tag", ctypes.c_int64), ("d_val", ctypes.c_uint64)]


class _Verdef(ctypes.Structure):
    _fields_ = [("vd_version", ctypes.c_uint16), ("vd_flags", ctypes.c_uint16),
                ("vd_ndx", ctypes.c_uint16), ("vd_cnt", ctypes.c_uint16),
                ("vd_hash", ctypes.c_uint32), ("vd_aux", ctypes.c_uint32),
                ("vd_next", ctypes.c_uint32)]


class _Verdaux(ctypes.Structure):
    _fields_ = [("vda_name", ctypes.c_uint32), ("vda_next", ctypes.c_uint32)]


class _Data(ctypes.Structure):
    _fields_ = [("d_buf", ctypes.c_void_p), ("d_type", ctypes.c_int),
                ("d_version", ctypes.c_uint), ("d_size", ctypes.c_size_t),
                ("d_off", ctypes.c_int64), ("d_align", ctypes.c_size_t)]


@dataclass
class Node:
    name: str
    parents: list            # the nodes it inherits from, in the file's order


@dataclass
class Versions:
    path: str
    soname: str
    machine: int             # e_machine
    needed: list = field(default_factory=list)    # DT_NEEDED, in order
    nodes: list = field(default_factory=list)     # [Node], definition order, base excluded
    symbols: dict = field(default_factory=dict)   # name -> [(node, is_default)]
    functions: set = field(default_factory=set)   # defined names that are functions
    objects: dict = field(default_factory=dict)   # defined variables: name -> size
    thread_local: set = field(default_factory=set)  # defined thread-local variables
    # Definitions that are not the library's own: weak or unique ones (C++'s
    # vague linkage, typeinfo and template instances every object using them
    # defines; a library's weak API, NCCL's ncclX beside pncclX) and the C++
    # runtime a library linked statically (cuFile exports std::runtime_error's
    # constructor). Never served unless a header declares them: a drop-in
    # defining them would capture every other object's references (each
    # std::runtime_error built in the process would load cuFile).
    vague: set = field(default_factory=set)

    @property
    def versioned(self):
        return bool(self.nodes)

    def main_node(self):
        """The node most defined symbols are the default version of: where a
        name the library does not define (a shim's control API) goes."""
        count = {n.name: 0 for n in self.nodes}
        for versions in self.symbols.values():
            for node, default in versions:
                if default and node in count:
                    count[node] += 1
        return max(self.nodes, key=lambda n: count[n.name]).name if self.nodes else None


# The C++ runtime's names (namespace std, operator new and delete, the ABI's
# __cxa_ and unwinder entry points), mangled or not.
_CXX_RUNTIME = re.compile(r"^(_Z(GTt|TH|TW)?N?K?(St|Sa|Sb|Ss|Si|So|Sd)|_ZT[ISV]N?K?St|_ZTVN10__cxxabiv|"
                          r"_Z(nw|na|dl|da)[a-zA-Z]|__cxa_|__gxx_|_Unwind_|__cxxabiv)")


def cxx_runtime(name):
    return bool(_CXX_RUNTIME.match(name))


_lib = None


def _libelf():
    global _lib
    if _lib is None:
        name = ctypes.util.find_library("elf") or "libelf.so.1"
        try:
            lib = ctypes.CDLL(name)
        except OSError as e:
            raise GenError("lazygen", f"cannot read symbol versions: libelf cannot be loaded "
                                      f"({e}); install elfutils' libelf (Debian: libelf1)")
        P, I, U = ctypes.c_void_p, ctypes.c_int, ctypes.c_uint
        sigs = {"elf_version": (U, [U]), "elf_begin": (P, [I, I, P]), "elf_end": (I, [P]),
                "elf_kind": (I, [P]), "elf_errmsg": (ctypes.c_char_p, [I]), "elf_errno": (I, []),
                "elf_nextscn": (P, [P, P]), "elf_getscn": (P, [P, ctypes.c_size_t]),
                "elf_getdata": (ctypes.POINTER(_Data), [P, P]),
                "elf_strptr": (ctypes.c_char_p, [P, ctypes.c_size_t, ctypes.c_size_t]),
                "gelf_getehdr": (P, [P, ctypes.POINTER(_Ehdr)]),
                "gelf_getshdr": (P, [P, ctypes.POINTER(_Shdr)]),
                "gelf_getsym": (P, [P, I, ctypes.POINTER(_Sym)]),
                "gelf_getdyn": (P, [P, I, ctypes.POINTER(_Dyn)]),
                "gelf_getversym": (P, [P, I, ctypes.POINTER(ctypes.c_uint16)]),
                "gelf_getverdef": (P, [P, I, ctypes.POINTER(_Verdef)]),
                "gelf_getverdaux": (P, [P, I, ctypes.POINTER(_Verdaux)])}
        for fn, (res, args) in sigs.items():
            f = getattr(lib, fn)
            f.restype, f.argtypes = res, args
        lib.elf_version(_EV_CURRENT)
        _lib = lib
    return _lib


def read(path):
    """The Versions of the shared object at path; GenError naming the cause
    when it cannot be read (not ELF, no dynamic symbols)."""
    lib = _libelf()
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError as e:
        raise GenError(path, f"cannot read symbol versions: {e.strerror}")
    elf = lib.elf_begin(fd, _ELF_C_READ, None)
    try:
        if not elf or lib.elf_kind(elf) != _ELF_K_ELF:
            raise GenError(path, "cannot read symbol versions: not an ELF file")
        return _read(lib, elf, path)
    finally:
        if elf:
            lib.elf_end(elf)
        os.close(fd)


def _sections(lib, elf):
    scn, out = None, {}
    while True:
        scn = lib.elf_nextscn(elf, scn)
        if not scn:
            return out
        sh = _Shdr()
        if lib.gelf_getshdr(scn, ctypes.byref(sh)):
            out.setdefault(sh.sh_type, (scn, sh))


def _read(lib, elf, path):
    eh = _Ehdr()
    if not lib.gelf_getehdr(elf, ctypes.byref(eh)):
        raise GenError(path, "cannot read symbol versions: no ELF header")
    secs = _sections(lib, elf)
    if _SHT_DYNSYM not in secs:
        raise GenError(path, "cannot read symbol versions: no dynamic symbol table "
                             "(not a shared object, or its section headers are stripped)")

    def text(link, off):
        s = lib.elf_strptr(elf, link, off)
        return s.decode("utf-8", "replace") if s else ""

    out = Versions(path, "", eh.e_machine)
    if _SHT_DYNAMIC in secs:
        scn, sh = secs[_SHT_DYNAMIC]
        data = lib.elf_getdata(scn, None)
        d = _Dyn()
        for k in range(sh.sh_size // max(sh.sh_entsize, 1) if data else 0):
            if not lib.gelf_getdyn(data, k, ctypes.byref(d)) or d.d_tag == _DT_NULL:
                break
            if d.d_tag == _DT_SONAME:
                out.soname = text(sh.sh_link, d.d_val)
            elif d.d_tag == _DT_NEEDED:
                out.needed.append(text(sh.sh_link, d.d_val))

    by_index = {}
    if _SHT_GNU_VERDEF in secs:
        scn, sh = secs[_SHT_GNU_VERDEF]
        data = lib.elf_getdata(scn, None)
        off, vd, aux = 0, _Verdef(), _Verdaux()
        for _ in range(sh.sh_info if data else 0):  # sh_info: the number of entries
            if not lib.gelf_getverdef(data, off, ctypes.byref(vd)):
                break
            names, a = [], off + vd.vd_aux
            for _ in range(vd.vd_cnt):
                if not lib.gelf_getverdaux(data, a, ctypes.byref(aux)):
                    break
                names.append(text(sh.sh_link, aux.vda_name))
                a += aux.vda_next
            if names:
                by_index[vd.vd_ndx] = names[0]
                if not vd.vd_flags & _VER_FLG_BASE:
                    out.nodes.append(Node(names[0], names[1:]))
            if not vd.vd_next:
                break
            off += vd.vd_next

    scn, sh = secs[_SHT_DYNSYM]
    syms = lib.elf_getdata(scn, None)
    versym = lib.elf_getdata(secs[_SHT_GNU_VERSYM][0], None) if _SHT_GNU_VERSYM in secs else None
    node_names = {n.name for n in out.nodes}
    sym, vs = _Sym(), ctypes.c_uint16()
    executable = {}  # section index: whether it holds code

    def in_code(index):
        if index not in executable:
            scn, sh = lib.elf_getscn(elf, index), _Shdr()
            executable[index] = bool(scn and lib.gelf_getshdr(scn, ctypes.byref(sh)) and
                                     sh.sh_flags & _SHF_EXECINSTR)
        return executable[index]
    for k in range(1, sh.sh_size // max(sh.sh_entsize, 1) if syms else 0):
        if not lib.gelf_getsym(syms, k, ctypes.byref(sym)) or sym.st_shndx == _SHN_UNDEF:
            continue
        name = text(sh.sh_link, sym.st_name)
        index = 0  # no .gnu.version entry: unversioned
        if versym and lib.gelf_getversym(versym, k, ctypes.byref(vs)):
            index = vs.value
        node = by_index.get(index & 0x7FFF)
        if sym.st_shndx == _SHN_ABS and name == node and name in node_names:
            continue  # the marker the linker writes for each node
        if node is None or node not in node_names:
            node = None  # unversioned (or the base version: the same to ld.so)
        out.symbols.setdefault(name, []).append((node, not index & _VERSYM_HIDDEN))
        if sym.st_info >> 4 in (_STB_WEAK, _STB_GNU_UNIQUE) or cxx_runtime(name):
            out.vague.add(name)
        kind = sym.st_info & 0xF
        if kind in (_STT_FUNC, _STT_GNU_IFUNC):
            out.functions.add(name)
        elif kind == _STT_NOTYPE and sym.st_shndx < _SHN_LORESERVE and in_code(sym.st_shndx):
            # An assembly label exported without .type: code, called as a function.
            out.functions.add(name)
        elif kind == _STT_OBJECT and sym.st_shndx != _SHN_ABS:
            out.objects[name] = sym.st_size
        elif kind == _STT_TLS:
            out.thread_local.add(name)
    return out


def unversion(path, names):
    """Give the defined dynamic symbols named in names the index of an
    unversioned definition (1, VER_NDX_GLOBAL) in the .gnu.version of the
    shared object at path, in place: how a drop-in matches a real library
    that exports some names unversioned beside versioned ones (a version
    script cannot say so: an anonymous node does not mix with named ones).
    ld.so's lookups read the index only, and neither hash table holds it.
    Returns the number of entries changed."""
    lib = _libelf()
    fd = os.open(path, os.O_RDWR)
    elf = lib.elf_begin(fd, _ELF_C_READ, None)
    try:
        if not elf or lib.elf_kind(elf) != _ELF_K_ELF:
            raise GenError(path, "cannot set symbol versions: not an ELF file")
        eh = _Ehdr()
        secs = _sections(lib, elf)
        if not lib.gelf_getehdr(elf, ctypes.byref(eh)) or _SHT_DYNSYM not in secs \
                or _SHT_GNU_VERSYM not in secs:
            return 0
        order = "little" if eh.e_ident[5] == 1 else "big"  # EI_DATA: ELFDATA2LSB
        scn, sh = secs[_SHT_DYNSYM]
        syms = lib.elf_getdata(scn, None)
        versym_off = secs[_SHT_GNU_VERSYM][1].sh_offset
        sym, changed = _Sym(), []
        for k in range(1, sh.sh_size // max(sh.sh_entsize, 1) if syms else 0):
            if not lib.gelf_getsym(syms, k, ctypes.byref(sym)) or sym.st_shndx == _SHN_UNDEF:
                continue
            s = lib.elf_strptr(elf, sh.sh_link, sym.st_name)
            if s and s.decode("utf-8", "replace") in names:
                changed.append(k)
    finally:
        if elf:
            lib.elf_end(elf)
    try:
        for k in changed:
            os.pwrite(fd, (1).to_bytes(2, order), versym_off + 2 * k)
    finally:
        os.close(fd)
    return len(changed)
