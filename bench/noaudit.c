/* SPDX-License-Identifier: MIT
 * An audit module that does nothing but accept the interface (la_version):
 * what the dynamic linker's LD_AUDIT costs a process before any module's
 * own work, the floor under lazynccl-run's (bench/scale). */
unsigned int la_version(unsigned int version);

unsigned int la_version(unsigned int version)
{
    return version;
}
