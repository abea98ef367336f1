#ifndef CSANDBOXSHIMS_H
#define CSANDBOXSHIMS_H

#include <stdint.h>

// Why this target exists: the layers that confine a decoder process are Linux system calls
// and C interfaces that Swift's Glibc module does not import or imports awkwardly: clearenv,
// close_range, setrlimit's resource enum, prctl's variadic call, Landlock (raw syscalls on
// kernel structures, some newer than Debian 12's headers) and libseccomp. Each function
// applies or probes exactly one thing and returns 0 (or a positive answer) on success, or
// -errno on failure; it never exits. Every function is prefixed with the module name. On
// platforms other than Linux every layer answers -ENOSYS.

/// Empties the process's environment (clearenv(3)).
int csandboxshims_clear_environment(void);

/// The number of variables in the process's environment now.
int csandboxshims_environment_count(void);

/// Closes every descriptor from `lowest` up (close_range(2), or one by one where it is
/// missing).
int csandboxshims_close_descriptors_from(int lowest);

/// The number of open descriptors (entries of /proc/self/fd, less the one listing it), or
/// -errno.
int csandboxshims_open_descriptor_count(void);

/// The number of threads of the process (entries of /proc/self/task), or -errno.
int csandboxshims_thread_count(void);

/// Sets the soft limit of the address space (`cpu` 0, bytes) or of CPU time (`cpu` 1, seconds)
/// to `soft`, at most the hard limit (UINT64_MAX: back to the hard limit); returns 0 or -errno.
int csandboxshims_set_soft_limit(int cpu, uint64_t soft);

/// Sets the hard and soft limits: address space (`address_space` bytes), CPU time
/// (`cpu_seconds`), the size of a written file (`file_size` bytes), open descriptors
/// (`open_files`), and no core dumps.
int csandboxshims_set_limits(uint64_t address_space, uint64_t cpu_seconds, uint64_t file_size,
                             uint64_t open_files);

/// prctl(PR_SET_NO_NEW_PRIVS, 1): no exec can ever grant privileges again; seccomp needs it.
int csandboxshims_set_no_new_privs(void);

/// Empties the effective, permitted and inheritable capability sets (capset(2)): a decoder
/// started by root keeps uid 0 but not CAP_SYS_PTRACE, CAP_DAC_OVERRIDE and the rest.
int csandboxshims_drop_capabilities(void);

/// The Landlock ABI version the kernel offers (1...), or -errno: -ENOSYS (no such syscall)
/// or -EOPNOTSUPP (built in but disabled at boot).
int csandboxshims_landlock_abi(void);

/// Confines the calling thread, and the threads it creates later, with Landlock: every file
/// system right this ABI knows on the directory `staging_fd` and beneath it; reading (files and
/// directories, no execution) beneath each of the `count` paths in `read_paths` that exist; no
/// other path at all. From ABI 4 no TCP bind or connect; from ABI 6 no abstract UNIX socket
/// and no signal to a process outside the domain. Returns the ABI applied, or -errno.
int csandboxshims_landlock_restrict(int staging_fd, const char *const *read_paths, int count);

/// Loads the seccomp-bpf filter (libseccomp) on every thread of the process (TSYNC): the
/// system calls listed in CSandboxShims.c fail with EPERM, clone3 with ENOSYS (so that glibc
/// falls back to clone, whose flags a filter can see) and clone with a namespace flag with
/// EPERM. Everything else is allowed. Returns the number of rules added, or -errno.
int csandboxshims_seccomp_apply(void);

/// Whether the kernel offers seccomp filters: 1 yes, 0 no.
int csandboxshims_seccomp_available(void);

/// Probe: opens `path` for reading and closes it. 0 when it opened, or -errno.
int csandboxshims_probe_open_read(const char *path);

/// Probe: creates (exclusively) and writes one byte to `path`, then removes it. 0 when it was
/// written, or -errno.
int csandboxshims_probe_create_file(const char *path);

/// Probe: connects a TCP socket to 127.0.0.1:`port`. 0 when it connected, or -errno; the
/// failing call is told in `*step` (1 socket, 2 connect).
int csandboxshims_probe_connect_loopback(int port, int *step);

/// Probe: runs `path` (posix_spawn, no arguments, empty environment) and waits for it. 0 when
/// it ran, or -errno of the exec.
int csandboxshims_probe_exec(const char *path);

/// Probe: maps `bytes` of anonymous memory (and unmaps it). 0 when it was mapped, or -errno.
int csandboxshims_probe_map(uint64_t bytes);

/// Caps the number of glibc's malloc arenas (mallopt(M_ARENA_MAX)): each reserves 64 MiB of
/// address space, which an address-space limit counts. Does nothing on other C libraries.
void csandboxshims_set_arena_max(int arenas);

/// prctl(PR_SET_DUMPABLE, 0): no core dump, and /proc/<pid> of this process (its environment,
/// memory, descriptors) belongs to root, so a process of the same user cannot read it. 0 or
/// -errno.
int csandboxshims_set_not_dumpable(void);

/// prctl(PR_GET_DUMPABLE): 1 when dumpable, 0 when not, or -errno.
int csandboxshims_dumpable(void);

/// Sends `count` bytes on the UNIX socket `socket` (MSG_NOSIGNAL) with the descriptor
/// `descriptor` attached (SCM_RIGHTS) to the first byte; the rest as send(2) would. Returns the
/// bytes sent (at least one, so that the descriptor went), or -errno.
long csandboxshims_send_with_descriptor(int socket, const void *bytes, unsigned long count, int descriptor);

/// Receives at most `count` bytes from the UNIX socket `socket` (recvmsg(2)); a descriptor
/// attached to them is stored in `*descriptor` (close-on-exec) when `*descriptor` is -1, and
/// closed otherwise, as is every further one: a peer cannot make the receiver hold more than
/// one. Returns the bytes received (0 at the end of the stream), or -errno.
long csandboxshims_receive_with_descriptor(int socket, void *bytes, unsigned long count, int *descriptor);

#endif
