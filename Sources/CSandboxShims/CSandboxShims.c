// clearenv, close_range, O_PATH and CLONE_NEW* are GNU/Linux extensions.
#define _GNU_SOURCE
#include "CSandboxShims.h"

#include <errno.h>

#ifdef __linux__

#include <dirent.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/landlock.h>
#include <malloc.h>
#include <sched.h>
#include <seccomp.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

int csandboxshims_clear_environment(void) { return clearenv() == 0 ? 0 : -errno; }

int csandboxshims_environment_count(void) {
    int count = 0;
    for (char **variable = environ; variable && *variable; variable++) count++;
    return count;
}

int csandboxshims_close_descriptors_from(int lowest) {
#ifdef SYS_close_range
    if (syscall(SYS_close_range, (unsigned)lowest, ~0U, 0) == 0) return 0;
#endif
    // Older kernels: every descriptor up to the soft limit.
    long maximum = sysconf(_SC_OPEN_MAX);
    for (long fd = lowest; fd < maximum; fd++) close((int)fd);
    return 0;
}

/// The entries of a /proc directory but "." and "..", less `less`.
static int count_entries(const char *path, int less) {
    DIR *directory = opendir(path);
    if (!directory) return -errno;
    int count = 0;
    for (struct dirent *entry; (entry = readdir(directory));) {
        if (entry->d_name[0] != '.') count++;
    }
    closedir(directory);
    return count - less;
}

int csandboxshims_open_descriptor_count(void) { return count_entries("/proc/self/fd", 1); }

int csandboxshims_thread_count(void) { return count_entries("/proc/self/task", 0); }

/// Sets one limit, hard and soft.
static int set_limit(int resource, uint64_t value) {
    struct rlimit limit = {.rlim_cur = value, .rlim_max = value};
    return setrlimit(resource, &limit) == 0 ? 0 : -errno;
}

int csandboxshims_set_soft_limit(int cpu, uint64_t soft) {
    int resource = cpu ? RLIMIT_CPU : RLIMIT_AS;
    struct rlimit limit;
    if (getrlimit(resource, &limit) != 0) return -errno;
    limit.rlim_cur = (limit.rlim_max != RLIM_INFINITY && soft > limit.rlim_max) ? limit.rlim_max : soft;
    return setrlimit(resource, &limit) == 0 ? 0 : -errno;
}

int csandboxshims_set_limits(uint64_t address_space, uint64_t cpu_seconds, uint64_t file_size,
                             uint64_t open_files) {
    int result;
    if ((result = set_limit(RLIMIT_AS, address_space))) return result;
    if ((result = set_limit(RLIMIT_CPU, cpu_seconds))) return result;
    if ((result = set_limit(RLIMIT_FSIZE, file_size))) return result;
    if ((result = set_limit(RLIMIT_NOFILE, open_files))) return result;
    return set_limit(RLIMIT_CORE, 0);
}

int csandboxshims_set_no_new_privs(void) {
    return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 ? 0 : -errno;
}

int csandboxshims_drop_capabilities(void) {
    struct __user_cap_header_struct header = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
    struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];
    memset(data, 0, sizeof(data));
    return syscall(SYS_capset, &header, data) == 0 ? 0 : -errno;
}

// MARK: - Landlock

// Rights and fields newer than Debian 12's <linux/landlock.h> (Linux 6.1, ABI 2): the kernel
// takes the structure's size as its version, so a newer layout is passed only to a kernel
// whose ABI knows it.
#define ACCESS_FS_REFER (1ULL << 13)     // ABI 2
#define ACCESS_FS_TRUNCATE (1ULL << 14)  // ABI 3
#define ACCESS_FS_IOCTL_DEV (1ULL << 15) // ABI 5
#define ACCESS_NET_BIND_TCP (1ULL << 0)  // ABI 4
#define ACCESS_NET_CONNECT_TCP (1ULL << 1)
#define SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0) // ABI 6
#define SCOPE_SIGNAL (1ULL << 1)

/// struct landlock_ruleset_attr as of ABI 6.
struct ruleset_attributes {
    uint64_t handled_access_fs;
    uint64_t handled_access_net;
    uint64_t scoped;
};

int csandboxshims_landlock_abi(void) {
    long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
    return abi < 0 ? -errno : (int)abi;
}

int csandboxshims_landlock_restrict(int staging_fd, const char *const *read_paths, int count) {
    int abi = csandboxshims_landlock_abi();
    if (abi < 1) return abi < 0 ? abi : -EOPNOTSUPP;
    uint64_t all_fs = (1ULL << 13) - 1; // ABI 1: EXECUTE ... MAKE_SYM
    if (abi >= 2) all_fs |= ACCESS_FS_REFER;
    if (abi >= 3) all_fs |= ACCESS_FS_TRUNCATE;
    if (abi >= 5) all_fs |= ACCESS_FS_IOCTL_DEV;
    struct ruleset_attributes attributes = {.handled_access_fs = all_fs};
    size_t size = sizeof(uint64_t);
    if (abi >= 4) {
        attributes.handled_access_net = ACCESS_NET_BIND_TCP | ACCESS_NET_CONNECT_TCP;
        size = 2 * sizeof(uint64_t);
    }
    if (abi >= 6) {
        attributes.scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL;
        size = sizeof(attributes);
    }
    int ruleset = (int)syscall(SYS_landlock_create_ruleset, &attributes, size, 0);
    if (ruleset < 0) return -errno;

    int result = 0;
    struct landlock_path_beneath_attr staging = {.allowed_access = all_fs, .parent_fd = staging_fd};
    if (syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &staging, 0) != 0) {
        result = -errno;
    }
    const uint64_t read_only = LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR;
    for (int i = 0; result == 0 && i < count; i++) {
        int fd = open(read_paths[i], O_PATH | O_CLOEXEC);
        if (fd < 0) continue; // a path this system does not have (/lib64 on arm64, say)
        struct stat status;
        uint64_t allowed = read_only;
        // A rule on a file may only carry file rights.
        if (fstat(fd, &status) == 0 && !S_ISDIR(status.st_mode)) allowed = LANDLOCK_ACCESS_FS_READ_FILE;
        struct landlock_path_beneath_attr rule = {.allowed_access = allowed, .parent_fd = fd};
        if (syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &rule, 0) != 0) {
            result = -errno;
        }
        close(fd);
    }
    if (result == 0 && syscall(SYS_landlock_restrict_self, ruleset, 0) != 0) result = -errno;
    close(ruleset);
    return result == 0 ? abi : result;
}

// MARK: - seccomp

// How the set was chosen: the filter allows by default and refuses what a decoder never needs
// and an attacker inside one wants, in the groups of Docker's default profile and Chromium's
// renderer policy. Measured with `strace -f -c` of `pushprep process` on samples/ plus an
// H.264/AAC MP4 and a HEIC (9 inputs, all ok): of these calls only the program's own execve,
// clone3 (threads: glibc falls back to clone on ENOSYS) and socket/connect (glibc asking nscd
// for a user name; it then reads /etc/passwd, which Landlock refuses) appear; a decoder
// processes a JPEG and an MP4 under the filter (ConfinedDecodingTests). The groups:
// - the network: a decoder talks only on the socketpair it was given;
// - running programs: execve/execveat (Landlock refuses execution too, where it exists);
// - reaching other processes: ptrace, process_vm_*, kcmp, pidfd_getfd;
// - the kernel's larger attack surfaces: bpf, io_uring (its operations bypass seccomp),
//   userfaultfd, perf_event_open, keyrings, module loading, kexec;
// - the system's configuration: mount and the new mount API, chroot, pivot_root, namespaces,
//   swap, reboot, clocks, quotas, accounting, raw I/O ports, open_by_handle_at.
static const char *const refused[] = {
    "socket", "socketpair", "connect", "bind", "listen", "accept", "accept4",
    "execve", "execveat",
    "ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd",
    "bpf", "io_uring_setup", "io_uring_enter", "io_uring_register", "userfaultfd",
    "perf_event_open", "keyctl", "add_key", "request_key",
    "init_module", "finit_module", "delete_module", "kexec_load", "kexec_file_load",
    "mount", "umount2", "mount_setattr", "move_mount", "open_tree", "fsopen", "fsconfig",
    "fsmount", "fspick", "chroot", "pivot_root", "unshare", "setns",
    "swapon", "swapoff", "reboot", "settimeofday", "clock_settime", "clock_adjtime", "adjtimex",
    "quotactl", "acct", "iopl", "ioperm", "open_by_handle_at", "name_to_handle_at",
    "lookup_dcookie", "syslog", "vhangup", "personality",
};

/// The clone flags that make a new namespace.
static const unsigned long namespace_flags[] = {
    CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET, CLONE_NEWCGROUP,
};

int csandboxshims_seccomp_apply(void) {
    scmp_filter_ctx filter = seccomp_init(SCMP_ACT_ALLOW);
    if (!filter) return -ENOMEM;
    int rules = 0, result = seccomp_attr_set(filter, SCMP_FLTATR_CTL_TSYNC, 1);
    for (size_t i = 0; result == 0 && i < sizeof(refused) / sizeof(refused[0]); i++) {
        int number = seccomp_syscall_resolve_name(refused[i]);
        if (number == __NR_SCMP_ERROR) continue; // not a system call of this architecture
        result = seccomp_rule_add(filter, SCMP_ACT_ERRNO(EPERM), number, 0);
        rules++;
    }
    if (result == 0) {
        result = seccomp_rule_add(filter, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
        rules++;
    }
    for (size_t i = 0; result == 0 && i < sizeof(namespace_flags) / sizeof(namespace_flags[0]); i++) {
        unsigned long flag = namespace_flags[i];
        result = seccomp_rule_add(filter, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
                                  SCMP_A0(SCMP_CMP_MASKED_EQ, flag, flag));
        rules++;
    }
    if (result == 0) result = seccomp_load(filter);
    seccomp_release(filter);
    return result == 0 ? rules : result;
}

int csandboxshims_seccomp_available(void) {
    // PR_GET_SECCOMP answers EINVAL on a kernel built without seccomp.
    return prctl(PR_GET_SECCOMP, 0, 0, 0, 0) >= 0 ? 1 : 0;
}

// MARK: - Probes

int csandboxshims_probe_open_read(const char *path) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -errno;
    close(fd);
    return 0;
}

int csandboxshims_probe_create_file(const char *path) {
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) return -errno;
    int result = write(fd, "x", 1) == 1 ? 0 : -errno;
    close(fd);
    unlink(path);
    return result;
}

int csandboxshims_probe_connect_loopback(int port, int *step) {
    *step = 1;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -errno;
    *step = 2;
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int result = connect(fd, (struct sockaddr *)&address, sizeof(address)) == 0 ? 0 : -errno;
    close(fd);
    return result;
}

int csandboxshims_probe_exec(const char *path) {
    char *const arguments[] = {(char *)path, NULL};
    char *const environment[] = {NULL};
    pid_t pid;
    // glibc's posix_spawn reports the child's exec failure as its result.
    int result = posix_spawn(&pid, path, NULL, NULL, arguments, environment);
    if (result != 0) return -result;
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    return 0;
}

int csandboxshims_probe_map(uint64_t bytes) {
    void *mapped = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (mapped == MAP_FAILED) return -errno;
    munmap(mapped, bytes);
    return 0;
}

void csandboxshims_set_arena_max(int arenas) { mallopt(M_ARENA_MAX, arenas); }

int csandboxshims_set_not_dumpable(void) { return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == 0 ? 0 : -errno; }

int csandboxshims_dumpable(void) {
    int dumpable = prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
    return dumpable < 0 ? -errno : dumpable;
}

long csandboxshims_send_with_descriptor(int socket, const void *bytes, unsigned long count, int descriptor) {
    if (count == 0) return -EINVAL;
    struct iovec vector = {.iov_base = (void *)bytes, .iov_len = count};
    union {
        char buffer[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } control;
    memset(&control, 0, sizeof(control));
    struct msghdr message = {
        .msg_iov = &vector, .msg_iovlen = 1, .msg_control = control.buffer, .msg_controllen = sizeof(control.buffer)};
    struct cmsghdr *header = CMSG_FIRSTHDR(&message);
    header->cmsg_level = SOL_SOCKET;
    header->cmsg_type = SCM_RIGHTS;
    header->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(header), &descriptor, sizeof(int));
    for (;;) {
        ssize_t sent = sendmsg(socket, &message, MSG_NOSIGNAL);
        if (sent < 0 && errno == EINTR) continue;
        return sent < 0 ? -errno : (long)sent;
    }
}

long csandboxshims_receive_with_descriptor(int socket, void *bytes, unsigned long count, int *descriptor) {
    struct iovec vector = {.iov_base = bytes, .iov_len = count};
    union {
        char buffer[CMSG_SPACE(sizeof(int) * 4)];
        struct cmsghdr align;
    } control;
    struct msghdr message = {
        .msg_iov = &vector, .msg_iovlen = 1, .msg_control = control.buffer, .msg_controllen = sizeof(control.buffer)};
    ssize_t received;
    do {
        received = recvmsg(socket, &message, MSG_CMSG_CLOEXEC);
    } while (received < 0 && errno == EINTR);
    if (received < 0) return -errno;
    for (struct cmsghdr *header = CMSG_FIRSTHDR(&message); header != NULL; header = CMSG_NXTHDR(&message, header)) {
        if (header->cmsg_level != SOL_SOCKET || header->cmsg_type != SCM_RIGHTS) continue;
        size_t descriptors = (header->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < descriptors; i++) {
            int received_descriptor;
            memcpy(&received_descriptor, CMSG_DATA(header) + i * sizeof(int), sizeof(int));
            if (*descriptor == -1) {
                *descriptor = received_descriptor;
            } else {
                close(received_descriptor);
            }
        }
    }
    return (long)received;
}

#else // not Linux: no layer exists.

int csandboxshims_clear_environment(void) { return -ENOSYS; }
int csandboxshims_environment_count(void) { return -ENOSYS; }
int csandboxshims_close_descriptors_from(int lowest) { (void)lowest; return -ENOSYS; }
int csandboxshims_open_descriptor_count(void) { return -ENOSYS; }
int csandboxshims_thread_count(void) { return -ENOSYS; }
int csandboxshims_set_limits(uint64_t a, uint64_t c, uint64_t f, uint64_t o) { (void)a; (void)c; (void)f; (void)o; return -ENOSYS; }
int csandboxshims_set_no_new_privs(void) { return -ENOSYS; }
int csandboxshims_drop_capabilities(void) { return -ENOSYS; }
int csandboxshims_landlock_abi(void) { return -ENOSYS; }
int csandboxshims_landlock_restrict(int s, const char *const *r, int c) { (void)s; (void)r; (void)c; return -ENOSYS; }
int csandboxshims_seccomp_apply(void) { return -ENOSYS; }
int csandboxshims_seccomp_available(void) { return 0; }
int csandboxshims_probe_open_read(const char *p) { (void)p; return -ENOSYS; }
int csandboxshims_probe_create_file(const char *p) { (void)p; return -ENOSYS; }
int csandboxshims_probe_connect_loopback(int p, int *s) { (void)p; *s = 0; return -ENOSYS; }
int csandboxshims_probe_exec(const char *p) { (void)p; return -ENOSYS; }
int csandboxshims_probe_map(uint64_t b) { (void)b; return -ENOSYS; }
void csandboxshims_set_arena_max(int arenas) { (void)arenas; }
int csandboxshims_set_not_dumpable(void) { return -ENOSYS; }
int csandboxshims_dumpable(void) { return -ENOSYS; }
long csandboxshims_send_with_descriptor(int s, const void *b, unsigned long c, int d) { (void)s; (void)b; (void)c; (void)d; return -ENOSYS; }
long csandboxshims_receive_with_descriptor(int s, void *b, unsigned long c, int *d) { (void)s; (void)b; (void)c; (void)d; return -ENOSYS; }

#endif
