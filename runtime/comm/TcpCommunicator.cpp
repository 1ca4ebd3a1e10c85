//===- TcpCommunicator.cpp - ranks connected by TCP sockets ---------------===//

#include "TcpCommunicator.h"
#include "Watchdog.h"

#include "snnrt/Error.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

namespace snnrt {

namespace {

using Clock = std::chrono::steady_clock;

double secondsLeft(Clock::time_point deadline) {
  return std::chrono::duration<double>(deadline - Clock::now()).count();
}

std::string peerName(int peer) { return "rank " + std::to_string(peer); }

void sendAll(int fd, const void *data, size_t bytes, int peer) {
  const char *p = static_cast<const char *>(data);
  while (bytes) {
    ssize_t n = ::send(fd, p, bytes, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      throw Error("lost the connection to " + peerName(peer) + " (" +
                  std::strerror(errno) + "): it exited or failed");
    p += n;
    bytes -= static_cast<size_t>(n);
  }
}

void recvAll(int fd, void *data, size_t bytes, int peer) {
  char *p = static_cast<char *>(data);
  while (bytes) {
    ssize_t n = ::recv(fd, p, bytes, 0);
    if (n < 0 && errno == EINTR)
      continue;
    if (n == 0)
      throw Error(peerName(peer) + " closed its connection: it exited or "
                                   "failed (see its error above)");
    if (n < 0)
      throw Error("lost the connection to " + peerName(peer) + " (" +
                  std::strerror(errno) + ")");
    p += n;
    bytes -= static_cast<size_t>(n);
  }
}

void tune(int fd) {
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

/// A listening socket on `port` (0: any free port); returns the fd and sets
/// `bound` to the port.
int listenOn(int port, int &bound) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    throw Error(std::string("cannot create a socket: ") + std::strerror(errno));
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_ANY);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (::bind(fd, reinterpret_cast<sockaddr *>(&addr), sizeof addr) < 0 ||
      ::listen(fd, 128) < 0) {
    int err = errno;
    ::close(fd);
    throw Error("rank 0 cannot listen on port " + std::to_string(port) +
                " (MASTER_PORT): " + std::strerror(err) +
                "; pick a free port");
  }
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr *>(&addr), &len);
  bound = ntohs(addr.sin_port);
  return fd;
}

/// Connects to host:port, retrying until `deadline` (the listener may not
/// be up yet).
int connectTo(const std::string &host, int port, Clock::time_point deadline,
              const std::string &what) {
  addrinfo hints{}, *found = nullptr;
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  int rc = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints,
                         &found);
  if (rc != 0)
    throw Error("cannot resolve " + host + " (" + what +
                "): " + ::gai_strerror(rc));
  std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> guard(found,
                                                             ::freeaddrinfo);
  for (;;) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
      throw Error(std::string("cannot create a socket: ") + std::strerror(errno));
    if (::connect(fd, found->ai_addr, found->ai_addrlen) == 0) {
      tune(fd);
      return fd;
    }
    int err = errno;
    ::close(fd);
    if (secondsLeft(deadline) <= 0)
      throw Error("cannot connect to " + what + " at " + host + ":" +
                  std::to_string(port) + " (" + std::strerror(err) +
                  ") within --comm-timeout; is every rank started?");
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

int acceptOne(int listener, Clock::time_point deadline, const std::string &who) {
  for (;;) {
    pollfd p{listener, POLLIN, 0};
    int left = static_cast<int>(std::max(0.0, secondsLeft(deadline)) * 1000);
    int rc = ::poll(&p, 1, left);
    if (rc < 0 && errno == EINTR)
      continue;
    if (rc == 0)
      throw Error(who + " did not hear from every rank within --comm-timeout; "
                        "is every rank started (WORLD_SIZE ranks)?");
    int fd = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd >= 0) {
      tune(fd);
      return fd;
    }
  }
}

struct Hello {
  int32_t rank, size, port;
};

class TcpCommunicator : public Communicator {
public:
  TcpCommunicator(const JobEnvironment &job, const CommOptions &options)
      : rank_(job.rank), size_(job.size), peers(size_t(job.size), -1),
        dog(options.timeoutSeconds,
            [this](const std::string &why) { abort(why); }) {
    double wait = options.timeoutSeconds > 0 ? options.timeoutSeconds : 1e9;
    auto deadline =
        Clock::now() + std::chrono::duration_cast<Clock::duration>(
                           std::chrono::duration<double>(wait));
    connectAll(job, deadline);
  }
  ~TcpCommunicator() override {
    for (int fd : peers)
      if (fd >= 0)
        ::close(fd);
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string backendName() const override { return "tcp"; }

  void allReduceSum(float *data, size_t count, void *) override {
    if (size_ == 1)
      return;
    Watchdog::Scope scope(dog, "all-reduce");
    size_t bytes = count * sizeof(float);
    if (rank_ == 0) {
      // Summed in rank order on rank 0: the same bits for every rank.
      std::vector<float> part(count);
      for (int p = 1; p < size_; ++p) {
        recvAll(peers[p], part.data(), bytes, p);
        for (size_t i = 0; i < count; ++i)
          data[i] += part[i];
      }
      for (int p = 1; p < size_; ++p)
        sendAll(peers[p], data, bytes, p);
    } else {
      sendAll(peers[0], data, bytes, 0);
      recvAll(peers[0], data, bytes, 0);
    }
  }
  void broadcast(void *data, size_t bytes, int root, void *) override {
    checkPeer(root, "broadcast");
    Watchdog::Scope scope(dog, "broadcast");
    if (rank_ == root) {
      for (int p = 0; p < size_; ++p)
        if (p != root)
          sendAll(peers[p], data, bytes, p);
    } else {
      recvAll(peers[root], data, bytes, root);
    }
  }
  void send(const void *data, size_t bytes, int peer, void *) override {
    checkPeer(peer, "send");
    if (peer == rank_)
      throw Error("send: rank " + std::to_string(peer) + " is this rank");
    Watchdog::Scope scope(dog, "send");
    uint64_t header = bytes;
    sendAll(peers[peer], &header, sizeof header, peer);
    sendAll(peers[peer], data, bytes, peer);
  }
  void recv(void *data, size_t bytes, int peer, void *) override {
    checkPeer(peer, "recv");
    if (peer == rank_)
      throw Error("recv: rank " + std::to_string(peer) + " is this rank");
    Watchdog::Scope scope(dog, "recv");
    uint64_t header = 0;
    recvAll(peers[peer], &header, sizeof header, peer);
    if (header != bytes)
      throw Error("recv from rank " + std::to_string(peer) + ": expected " +
                  std::to_string(bytes) + " bytes, it sent " +
                  std::to_string(header) + "; the ranks disagree on the size");
    recvAll(peers[peer], data, bytes, peer);
  }
  void barrier() override {
    float token = 1.0f;
    allReduceSum(&token, 1, nullptr);
  }
  [[noreturn]] void abort(const std::string &why) override {
    std::fprintf(stderr, "snn-run: error: rank %d: %s\n", rank_, why.c_str());
    std::fflush(stderr);
    // Closing the sockets wakes every peer blocked on this rank; they end
    // with "rank N closed its connection".
    for (int fd : peers)
      if (fd >= 0)
        ::shutdown(fd, SHUT_RDWR);
    std::_Exit(1);
  }

private:
  void checkPeer(int peer, const char *what) const {
    if (peer < 0 || peer >= size_)
      throw Error(std::string(what) + ": rank " + std::to_string(peer) +
                  " does not exist in a job of " + std::to_string(size_) +
                  " ranks");
  }
  void connectAll(const JobEnvironment &job, Clock::time_point deadline);

  int rank_, size_;
  std::vector<int> peers; ///< a socket per rank (-1 for this one)
  Watchdog dog;
};

void TcpCommunicator::connectAll(const JobEnvironment &job,
                                 Clock::time_point deadline) {
  if (size_ == 1)
    return;
  std::string master = "rank 0 (MASTER_ADDR:MASTER_PORT)";
  // Rank 0 learns every rank's address and listening port, and sends the
  // table to all; then rank r connects to ranks 1..r-1 and accepts the rest.
  std::vector<uint32_t> ips(size_t(size_), 0);
  std::vector<int32_t> ports(size_t(size_), 0);
  if (rank_ == 0) {
    int port = 0;
    int listener = listenOn(job.masterPort, port);
    try {
      for (int i = 1; i < size_; ++i) {
        int fd = acceptOne(listener, deadline, "rank 0");
        Hello hello{};
        recvAll(fd, &hello, sizeof hello, -1);
        if (hello.size != size_ || hello.rank <= 0 || hello.rank >= size_ ||
            peers[size_t(hello.rank)] >= 0)
          throw Error("rank 0 got a connection from 'rank " +
                      std::to_string(hello.rank) + " of " +
                      std::to_string(hello.size) + "' in a job of " +
                      std::to_string(size_) +
                      " ranks: check RANK and WORLD_SIZE of every rank");
        sockaddr_in addr{};
        socklen_t len = sizeof addr;
        ::getpeername(fd, reinterpret_cast<sockaddr *>(&addr), &len);
        peers[size_t(hello.rank)] = fd;
        ips[size_t(hello.rank)] = addr.sin_addr.s_addr;
        ports[size_t(hello.rank)] = hello.port;
      }
    } catch (...) {
      ::close(listener);
      throw;
    }
    ::close(listener);
    for (int p = 1; p < size_; ++p) {
      sendAll(peers[p], ips.data(), ips.size() * sizeof ips[0], p);
      sendAll(peers[p], ports.data(), ports.size() * sizeof ports[0], p);
    }
    return;
  }
  int port = 0;
  int listener = listenOn(0, port);
  try {
    peers[0] = connectTo(job.masterAddr, job.masterPort, deadline, master);
    Hello hello{rank_, size_, port};
    sendAll(peers[0], &hello, sizeof hello, 0);
    recvAll(peers[0], ips.data(), ips.size() * sizeof ips[0], 0);
    recvAll(peers[0], ports.data(), ports.size() * sizeof ports[0], 0);
    for (int p = 1; p < rank_; ++p) {
      char text[INET_ADDRSTRLEN] = {};
      in_addr a{ips[size_t(p)]};
      ::inet_ntop(AF_INET, &a, text, sizeof text);
      peers[size_t(p)] = connectTo(text, ports[size_t(p)], deadline,
                                   "rank " + std::to_string(p));
      int32_t me = rank_;
      sendAll(peers[size_t(p)], &me, sizeof me, p);
    }
    for (int p = rank_ + 1; p < size_; ++p) {
      int fd = acceptOne(listener, deadline, "rank " + std::to_string(rank_));
      int32_t who = -1;
      recvAll(fd, &who, sizeof who, -1);
      if (who <= rank_ || who >= size_ || peers[size_t(who)] >= 0)
        throw Error("rank " + std::to_string(rank_) +
                    " got an unexpected connection (rank " +
                    std::to_string(who) + ")");
      peers[size_t(who)] = fd;
    }
  } catch (...) {
    ::close(listener);
    throw;
  }
  ::close(listener);
}

} // namespace

std::unique_ptr<Communicator> createTcpCommunicator(const JobEnvironment &job,
                                                    const CommOptions &options) {
  return std::make_unique<TcpCommunicator>(job, options);
}

} // namespace snnrt
