#include "ui/connection_pool.hpp"

namespace laconic::ui {
namespace {

// The address this thread's connection was admitted from; "" before its first request.
thread_local std::string admitted_address;

}  // namespace

ConnectionPool::ConnectionPool(std::size_t max_threads, std::size_t per_client)
    : max_threads_(max_threads), per_client_(per_client) {}

ConnectionPool::~ConnectionPool() { shutdown(); }

void ConnectionPool::enqueue(std::function<void()> connection) {
  std::lock_guard<std::mutex> lock(mutex_);
  waiting_.push_back(std::move(connection));
  if (waiting_.size() > idle_ && threads_.size() < max_threads_) {
    ++idle_;  // the new thread counts as idle until it takes a connection
    threads_.emplace_back([this] { work(); });
  }
  ready_.notify_one();
}

void ConnectionPool::work() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    ready_.wait(lock, [this] { return !waiting_.empty() || shutdown_; });
    if (waiting_.empty()) return;  // shut down, nothing left to serve
    std::function<void()> connection = std::move(waiting_.front());
    waiting_.pop_front();
    --idle_;
    lock.unlock();
    connection();  // httplib reads, answers and closes the connection
    lock.lock();
    if (!admitted_address.empty()) {
      if (--per_address_[admitted_address] == 0) per_address_.erase(admitted_address);
      admitted_address.clear();
    }
    ++idle_;
  }
}

bool ConnectionPool::admit(const std::string& address) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!admitted_address.empty()) return true;  // a later request of a connection admitted already
  std::size_t& count = per_address_[address];
  if (count >= per_client_) return false;
  ++count;
  admitted_address = address;
  return true;
}

void ConnectionPool::shutdown() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (shutdown_ && threads_.empty()) return;
    shutdown_ = true;
  }
  ready_.notify_all();
  for (std::thread& t : threads_) t.join();
  threads_.clear();
}

std::size_t ConnectionPool::threads() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return threads_.size();
}

}  // namespace laconic::ui
