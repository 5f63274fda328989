#ifndef CSHIMS_H
#define CSHIMS_H


#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <stdint.h>

// epoll

static inline int cshims_epoll_create(void) {
    return epoll_create1(EPOLL_CLOEXEC);
}

static inline int cshims_epoll_ctl(int epfd, int op, int fd, uint32_t events, uint64_t data) {
    struct epoll_event event;
    event.events = events;
    event.data.u64 = data;
    return epoll_ctl(epfd, op, fd, &event);
}

/// Names the calling thread as `ps -L`, `top -H` and a profiler show it (the first 15 bytes).
void cshims_name_this_thread(const char *name);

/// Waits for events; writes up to `capacity` (events, data) pairs into the two arrays.
int cshims_epoll_wait(int epfd, uint32_t *events, uint64_t *data, int capacity, int timeout_ms);

static const uint32_t CSHIMS_EPOLLIN = EPOLLIN;
static const uint32_t CSHIMS_EPOLLOUT = EPOLLOUT;
static const uint32_t CSHIMS_EPOLLRDHUP = EPOLLRDHUP;
static const uint32_t CSHIMS_EPOLLHUP = EPOLLHUP;
static const uint32_t CSHIMS_EPOLLERR = EPOLLERR;
static const int CSHIMS_EPOLL_CTL_ADD = EPOLL_CTL_ADD;
static const int CSHIMS_EPOLL_CTL_MOD = EPOLL_CTL_MOD;
static const int CSHIMS_EPOLL_CTL_DEL = EPOLL_CTL_DEL;

// sockets

/// accept4 with SOCK_NONBLOCK | SOCK_CLOEXEC (accept4 needs _GNU_SOURCE, so it lives in shims.c).
int cshims_accept4(int fd, struct sockaddr *address, socklen_t *length);

static inline int cshims_socket_nonblocking(int domain, int type) {
    return socket(domain, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
}

static const int CSHIMS_MSG_NOSIGNAL = MSG_NOSIGNAL;

// files

/// Opens `path` read-only, refusing any resolution that leaves `directory_fd` (openat2 with
/// RESOLVE_BENEATH: no `..` escape, no absolute symlink, no magic link). -1 with errno on failure,
/// ENOSYS on kernels before 5.6.
int cshims_open_beneath(int directory_fd, const char *path);

// netlink

/// A socket subscribed to link and address changes (RTMGRP_LINK, RTMGRP_IPV4_IFADDR,
/// RTMGRP_IPV6_IFADDR); blocking reads return when something changed. -1 on failure.
int cshims_netlink_route_socket(void);

// A pipe whose two ends are closed on exec from the start (pipe2 with O_CLOEXEC), so a child
// spawned by another thread meanwhile never holds them open. 0, or -1 with errno.
int cshims_pipe_cloexec(int fds[2]);

// eventfd

static inline int cshims_eventfd(void) {
    return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
}

#endif
