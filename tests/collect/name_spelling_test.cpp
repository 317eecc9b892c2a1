// Kernel names spelled as nsys spells them where there is no libcufilt.a: each rule of
// nsys_spelling.hpp alone, then the names nsys printed (tests/collect/data). This target never
// links libcufilt, so demangle_kernel_name here is the fallback on every machine, CI's too.
#include "kernel_names_corpus.hpp"
#include "test_seed.hpp"

#include <nvscope/collect/detail/demangle.hpp>

#include <doctest/doctest.h>

#include <cstdlib>
#include <optional>
#include <random>
#include <string>

namespace nd = nvscope::detail;

namespace {

// One rule on a name small enough to hold only it. `differs`: the C++ runtime spells this
// name otherwise (the rule is a respelling, not a shared convention).
struct rule_case {
  const char* rule;
  const char* mangled;
  const char* nsys;
  bool differs;
};

// Spellings as NVIDIA's demangler writes them: the corpus names (data/) show each rule; the
// small names here were put through cu++filt on the GPU machine (data/compare_spelling.sh).
const rule_case rule_cases[] = {
    {"template parameter", "_Z1fIiEvT_", "void f<int>(T1)", true},
    {"template parameter", "_Z1fIicEvT0_T_", "void f<int, char>(T2, T1)", true},
    {"pointer", "_Z1fPi", "f(int *)", true},
    {"pointer to pointer", "_Z1fPPc", "f(char **)", true},
    {"reference", "_Z1fRi", "f(int &)", true},
    {"rvalue reference", "_Z1fOi", "f(int &&)", true},
    {"const", "_Z1fPKi", "f(const int *)", true},
    {"const reference", "_Z1fRKd", "f(const double &)", true},
    {"const pointer, and the space after it", "_Z1fIKPiEvv", "void f<int *const >()", true},
    {"literal int", "_Z1fILi4EEvv", "void f<(int)4>()", true},
    {"literal negative", "_Z1fILin2EEvv", "void f<(int)-2>()", true},
    {"literal bool", "_Z1fILb1EEvv", "void f<(bool)1>()", true},
    {"literal unsigned long", "_Z1fILm3EEvv", "void f<(unsigned long)3>()", true},
    {"literal enum", "_Z1fILN1a1EE0EEvv", "void f<(a::E)0>()", false},
    {"anonymous namespace", "_ZN12_GLOBAL__N_11fEv", "<unnamed>::f()", true},
    {"lambda", "_Z1fIZ1gvEUlvE_EvT_", "void f<g()::[lambda() (instance 1)]>(T1)", true},
    {"lambda instance", "_Z1fIZ1gvEUliE0_EvT_", "void f<g()::[lambda(int) (instance 2)]>(T1)", true},
    {"call operator", "_ZN1AclEv", "A::operator ()()", true},
    {"closing brackets", "_Z1fI1AI1BEEvv", "void f<A<B>>()", true},
    {"return type in a local scope", "_Z1fIZ1gIiEvvEUlvE_EvT_", "void f<void g<int>()::[lambda() (instance 1)]>(T1)",
     true},
    {"pack expansion", "_Z1fIJicEEvDpT_", "void f<int, char>(T1...)", true},
    {"const member function", "_ZNK1A1fEv", "A::f() const", false},
    {"builtins", "_Z1fyxahstjmbwe", "f(unsigned long long, long long, signed char, unsigned char, short, "
     "unsigned short, unsigned int, unsigned long, bool, wchar_t, long double)", false},
    {"std", "_Z1fISt4plusIiEEvv", "void f<std::plus<int>>()", true},
    {"substitution", "_ZN1a1fENS_1BES0_", "a::f(a::B, a::B)", false},
    {"pointer to a repeated prefix", "_ZN4c10d8NCCLComm5splitEPS0_iiR17ncclConfig_v22800",
     "c10d::NCCLComm::split(c10d::NCCLComm*, int, int, ncclConfig_v22800 &)", true},
    {"reference to a repeated prefix", "_ZNSt8ios_base7_M_swapERS_", "std::ios_base::_M_swap(std::ios_base&)", false},
    {"reference to a repeated template given arguments",
     "_ZN4c10d16ProcessGroupNCCL6gatherERSt6vectorIS1_IN2at6TensorESaIS3_EESaIS5_EERS5_RKNS_13GatherOptionsE",
     "c10d::ProcessGroupNCCL::gather(std::vector<std::vector<at::Tensor, std::allocator<at::Tensor>>, "
     "std::allocator<std::vector<at::Tensor, std::allocator<at::Tensor>>>> &, std::vector<at::Tensor, "
     "std::allocator<at::Tensor>>&, const c10d::GatherOptions &)",
     true},
    {"pointer to a repeated class type", "_Z1fP1APKS_", "f(A *, const A *)", true},
    {"empty argument pack", "_ZSt4lockISt5mutexS0_JEEvRT_RT0_DpRT1_",
     "void std::lock<std::mutex, std::mutex, >(T1 &, T2 &, T3 &...)", true},
    {"nvcc's internal namespace", "_ZN41_INTERNAL_070cd642_10_GroupMM_cu_e18676a44cute1_E", "cute::_", true},
    {"local entity with a discriminator",
     "_ZZN2at4cuda4blas12gemm_tunableIddEEvcclllNS_10OpMathTypeIT_E4typeEPKS4_lS8_lS6_PT0_lE4gemm_0",
     "void at::cuda::blas::gemm_tunable<double, double>(char, char, long, long, long, at::OpMathType<T1>::type, "
     "const T1 *, long, const T1 *, long, at::OpMathType<T1>::type, T2 *, long)::gemm (instance 2)",
     true},
};

} // namespace

TEST_CASE("each spelling rule alone: NVIDIA's spelling, where the C++ runtime's differs") {
  for (const auto& c : rule_cases) {
    INFO("rule: " << std::string(c.rule) << "; mangled: " << std::string(c.mangled));
    CHECK(nd::demangle_nsys_spelling(c.mangled).value_or("(not read)") == std::string(c.nsys));
    if (!c.differs) continue;
    char* cxa = nd::itanium_demangle(c.mangled);
    REQUIRE(cxa != nullptr);
    CHECK(std::string(cxa) != std::string(c.nsys));
    std::free(cxa);
  }
}

TEST_CASE("names outside the rules are not read; the fallback spells them with the C++ runtime") {
  const char* outside[] = {
      "_ZN1AC1Ev",            // a constructor
      "_Z1fPFviE",            // a function type
      "_Z1fB5cxx11v",         // an ABI tag
      "_Z1fIXadL_Z1gvEEEvv",  // an expression as template argument
      "_ZN1AplERKS_",         // an operator other than ()
      "_Z1fv.constprop.0",    // a clone suffix
  };
  for (const char* m : outside) {
    INFO("mangled: " << std::string(m));
    CHECK_FALSE(nd::demangle_nsys_spelling(m).has_value());
    char* cxa = nd::itanium_demangle(m);
    if (cxa == nullptr) {
      CHECK(nd::fallback_demangle(m) == m);
      continue;
    }
    CHECK(nd::fallback_demangle(m) == cxa);
    std::free(cxa);
  }
  CHECK_FALSE(nd::demangle_nsys_spelling("plain_c_kernel").has_value());
  CHECK_FALSE(nd::demangle_nsys_spelling("").has_value());
  CHECK_FALSE(nd::demangle_nsys_spelling("_Z").has_value());
  CHECK_FALSE(nd::demangle_nsys_spelling("_Z1fS_").has_value());   // a substitution that is not there
  CHECK_FALSE(nd::demangle_nsys_spelling("_Z99f").has_value());    // a name longer than the string
  CHECK(nd::demangle_nsys_spelling("_Z1fIiEvT_x") == "void f<int>(T1, long long)");
}

TEST_CASE("without libcufilt, names are spelled as nsys spelled them: every corpus name, >= 45 of 47 PyTorch names") {
  CHECK(nd::kernel_name_spelling() == nvscope::name_spelling::itanium); // this target links no libcufilt
  for (const auto& c : kernel_names_corpus::corpora) {
    const auto rows = kernel_names_corpus::demangled_rows(c.prefix);
    REQUIRE(rows.size() == c.rows);
    std::size_t equal = 0;
    for (const auto& row : rows) {
      const std::string ours = nd::demangle_kernel_name(row.mangled.c_str());
      CHECK(ours == nd::fallback_demangle(row.mangled.c_str()));
      if (ours == row.nsys_demangled) {
        ++equal;
        continue;
      }
      MESSAGE("differs from nsys: " << row.mangled << "\n  ours: " << ours << "\n  nsys: " << row.nsys_demangled);
    }
    MESSAGE("corpus '" << std::string(c.prefix) << "': fallback_names_equal " << equal << " of " << rows.size());
    if (std::string(c.prefix).empty()) CHECK(equal >= 45);
    else CHECK(equal == rows.size());
  }
}

TEST_CASE("damaged names are read safely: cut short or with a character changed, they spell or are refused") {
  NVSCOPE_SEEDED_RNG(std::mt19937_64, rng);
  const auto rows = kernel_names_corpus::demangled_rows("");
  REQUIRE(!rows.empty());
  std::size_t refused = 0, total = 0;
  for (const auto& row : rows) {
    for (std::size_t n = 0; n < row.mangled.size(); ++n) {
      refused += !nd::demangle_nsys_spelling(std::string_view(row.mangled).substr(0, n)).has_value();
      ++total;
    }
    for (int k = 0; k < 20 && !row.mangled.empty(); ++k) {
      std::string m = row.mangled;
      m[std::uniform_int_distribution<std::size_t>(0, m.size() - 1)(rng)] =
          "_0123456789ESTNIZLKPRvijfUl"[std::uniform_int_distribution<int>(0, 26)(rng)];
      const auto spelled = nd::demangle_nsys_spelling(m);
      refused += !spelled.has_value();
      ++total;
      if (spelled) CHECK(!spelled->empty());
    }
  }
  CHECK(refused > 0); // the reader refuses what it cannot read rather than guessing
  CHECK(total > refused);
}
