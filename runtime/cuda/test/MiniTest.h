//===- MiniTest.h - a GoogleTest subset for machines without gtest -*- C++ -*-===//
//
// GPU servers may lack libgtest-dev; this header provides the few macros
// CudaBackendTest.cpp uses (TEST, EXPECT_*/ASSERT_*, GTEST_SKIP,
// SCOPED_TRACE) and a main(), so the test builds anywhere.
//
//===----------------------------------------------------------------------===//

#ifndef SNNRT_CUDA_TEST_MINITEST_H
#define SNNRT_CUDA_TEST_MINITEST_H

#include <cmath>
#include <cstdio>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

namespace minitest {
struct Case {
  const char *suite, *name;
  std::function<void()> body;
};
inline std::vector<Case> &registry() {
  static std::vector<Case> cases;
  return cases;
}
struct State {
  bool failed = false, skipped = false;
  std::vector<std::string> traces;
};
inline State &state() {
  static State s;
  return s;
}
struct Registrar {
  Registrar(const char *suite, const char *name, std::function<void()> body) {
    registry().push_back({suite, name, std::move(body)});
  }
};
/// Collects `<< message` after a failed check and prints it.
struct Reporter {
  std::ostringstream out;
  Reporter(const char *file, int line, const std::string &what) {
    state().failed = true;
    out << file << ":" << line << ": failure: " << what;
  }
  ~Reporter() {
    for (const std::string &t : state().traces)
      out << "\n  trace: " << t;
    std::fprintf(stderr, "%s\n", out.str().c_str());
  }
  template <typename T> Reporter &operator<<(const T &v) {
    out << " " << v;
    return *this;
  }
};
struct Trace {
  explicit Trace(const std::string &t) { state().traces.push_back(t); }
  ~Trace() { state().traces.pop_back(); }
};
/// `return Sink() = Reporter(...) << message;` returns from a void test body
/// after streaming the message (as gtest's ASSERT_* and GTEST_SKIP do).
struct Sink {
  void operator=(const Reporter &) const {}
};
struct Skip {
  std::ostringstream out;
  Skip() { state().skipped = true; }
  ~Skip() { std::printf("  skipped:%s\n", out.str().c_str()); }
  template <typename T> Skip &operator<<(const T &v) {
    out << " " << v;
    return *this;
  }
};
struct SkipSink {
  void operator=(const Skip &) const {}
};
inline int runAll() {
  int failed = 0, skipped = 0;
  for (const Case &c : registry()) {
    state() = State();
    std::printf("[ RUN      ] %s.%s\n", c.suite, c.name);
    c.body();
    const char *tag = state().failed    ? "[  FAILED  ]"
                      : state().skipped ? "[  SKIPPED ]"
                                        : "[       OK ]";
    failed += state().failed;
    skipped += state().skipped && !state().failed;
    std::printf("%s %s.%s\n", tag, c.suite, c.name);
  }
  std::printf("%zu tests, %d failed, %d skipped\n", registry().size(), failed,
              skipped);
  return failed ? 1 : 0;
}
} // namespace minitest

#define MT_CAT2(a, b) a##b
#define MT_CAT(a, b) MT_CAT2(a, b)
#define TEST(suite, name)                                                      \
  static void MT_CAT(suite##_##name, _body)();                                 \
  static ::minitest::Registrar MT_CAT(suite##_##name, _reg)(                   \
      #suite, #name, MT_CAT(suite##_##name, _body));                           \
  static void MT_CAT(suite##_##name, _body)()
#define MT_CHECK(cond, text, onFail)                                           \
  if (cond)                                                                    \
    ;                                                                          \
  else                                                                         \
    onFail ::minitest::Reporter(__FILE__, __LINE__, text)
#define MT_RETURN return ::minitest::Sink() =
#define EXPECT_TRUE(c) MT_CHECK((c), #c, )
#define EXPECT_FALSE(c) MT_CHECK(!(c), "!(" #c ")", )
#define ASSERT_TRUE(c) MT_CHECK((c), #c, MT_RETURN)
#define EXPECT_EQ(a, b) MT_CHECK((a) == (b), #a " == " #b, )
#define ASSERT_EQ(a, b) MT_CHECK((a) == (b), #a " == " #b, MT_RETURN)
#define EXPECT_NE(a, b) MT_CHECK((a) != (b), #a " != " #b, )
#define EXPECT_GT(a, b) MT_CHECK((a) > (b), #a " > " #b, )
#define EXPECT_LT(a, b) MT_CHECK((a) < (b), #a " < " #b, )
#define EXPECT_NEAR(a, b, tol)                                                 \
  MT_CHECK(std::fabs((a) - (b)) <= (tol), #a " ~ " #b, )
#define GTEST_SKIP() return ::minitest::SkipSink() = ::minitest::Skip()
#define SCOPED_TRACE(t) ::minitest::Trace MT_CAT(trace_, __LINE__)(t)
#define FAIL() MT_CHECK(false, "FAIL()", MT_RETURN)

#endif // SNNRT_CUDA_TEST_MINITEST_H
