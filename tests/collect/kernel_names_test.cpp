// Kernel names in nsys's three forms. The corpus (tests/collect/data, captured with nsys on
// the GPU machine) holds mangled names with nsys's demangled spelling and every base name nsys
// printed for them. The base form is derived and checked everywhere; the demangled form is
// checked to the letter in kernel_names_nvidia_test.cpp, where libcufilt is linked, and in
// name_spelling_test.cpp, where it is not.
#include "kernel_names_corpus.hpp"

#include <nvscope/collector.hpp>

#include <doctest/doctest.h>

#include <cstdlib>
#include <cstring>
#include <set>
#include <string>

namespace nd = nvscope::detail;

TEST_CASE("the corpora are there and have what their README says") {
  for (const auto& c : kernel_names_corpus::corpora) {
    INFO("corpus: " << c.prefix);
    CHECK(kernel_names_corpus::demangled_rows(c.prefix).size() == c.rows);
    CHECK(kernel_names_corpus::base_names(c.prefix).size() == c.bases);
  }
}

TEST_CASE("base names derived from nsys's demangled spelling are the base names nsys printed, and cover them") {
  for (const auto& c : kernel_names_corpus::corpora) {
    const auto bases = kernel_names_corpus::base_names(c.prefix);
    std::set<std::string> derived;
    for (const auto& row : kernel_names_corpus::demangled_rows(c.prefix)) {
      const std::string base(nd::kernel_base_name(row.nsys_demangled));
      INFO("demangled: " << row.nsys_demangled << " base: " << base);
      CHECK(bases.count(base) == 1);
      derived.insert(base);
    }
    // Every base nsys printed comes from a name we hold (the PyTorch corpus keeps only the
    // names whose timings joined unambiguously: see data/README.md).
    if (std::string(c.prefix) == "issue_") CHECK(derived == bases);
  }
}

TEST_CASE("the C++ runtime's spelling gives the same base names (the fallback's base form matches nsys)") {
  for (const auto& c : kernel_names_corpus::corpora)
    for (const auto& row : kernel_names_corpus::demangled_rows(c.prefix)) {
      if (row.mangled.rfind("_Z", 0) != 0) continue;
      char* cxa = nd::itanium_demangle(row.mangled.c_str());
      REQUIRE_MESSAGE(cxa != nullptr, row.mangled);
      INFO("mangled: " << row.mangled);
      CHECK(nd::kernel_base_name(cxa) == nd::kernel_base_name(row.nsys_demangled));
      std::free(cxa);
    }
}

TEST_CASE("base names of the spellings the issue reported, and of names that are not functions") {
  CHECK(nd::kernel_base_name("void axpy_t<float, (int)4>(T1 *, const T1 *, T1, int)") == "axpy_t");
  CHECK(nd::kernel_base_name("void axpy_t<float, 4>(float*, float const*, float, int)") == "axpy_t");
  CHECK(nd::kernel_base_name("<unnamed>::anon_kernel(int)") == "anon_kernel");
  CHECK(nd::kernel_base_name("(anonymous namespace)::anon_kernel(int)") == "anon_kernel");
  CHECK(nd::kernel_base_name("encoder_forward_kernel3(__nv_bfloat16 *, const int *, const __nv_bfloat16 *, int)") ==
        "encoder_forward_kernel3");
  CHECK(nd::kernel_base_name("void matmul_backward_bias_kernel9<float, (bool)1>(float *, const float *, int)") ==
        "matmul_backward_bias_kernel9");
  CHECK(nd::kernel_base_name("void tmpl_spin<(int)3>(long long)") == "tmpl_spin");
  CHECK(nd::kernel_base_name("nvjet_sm90_tst_64x8_64x16_2x4_h_bz_TNT") == "nvjet_sm90_tst_64x8_64x16_2x4_h_bz_TNT");
  CHECK(nd::kernel_base_name("") == "");
  CHECK(nd::kernel_base_name("(") == "(");
  CHECK(nd::kernel_base_name("k)") == "k)");
}

TEST_CASE("names that are not mangled stay as they are; the trace says which demangler spelled them") {
  CHECK(nd::demangle_kernel_name("nvjet_sm90_tst_64x8_64x16_2x4_h_bz_TNT") == "nvjet_sm90_tst_64x8_64x16_2x4_h_bz_TNT");
  CHECK(nd::demangle_kernel_name("_Znot valid") == "_Znot valid");
  CHECK(nd::demangle_kernel_name(nullptr).empty());
  nvscope::trace t;
  nd::activity_decoder d(t, true);
#if defined(NVSCOPE_HAS_CUFILT) && NVSCOPE_HAS_CUFILT
  CHECK(t.kernel_name_spelling == nvscope::name_spelling::nvidia);
#else
  CHECK(t.kernel_name_spelling == nvscope::name_spelling::itanium); // summaries warn about it
#endif
  nvscope::trace m;
  nd::activity_decoder kept(m, false);
  CHECK(m.kernel_name_spelling == nvscope::name_spelling::mangled);
}

TEST_CASE("the decoder keeps all three forms: demangled on the record, base and mangled beside it") {
  nvscope::trace t;
  nd::activity_decoder d(t, true);
  const char* names[] = {"_Z6axpy_tIfLi4EEvPT_PKS0_S0_i", "plain_c_kernel"};
  for (std::uint32_t i = 0; i < 2; ++i) {
    CUpti_ActivityKernel10 k;
    std::memset(&k, 0, sizeof k);
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.name = names[i];
    k.start = 10 + i;
    k.end = 20 + i;
    d.decode(reinterpret_cast<const CUpti_Activity*>(&k));
  }
  REQUIRE(t.kernels.size() == 2);
  const auto a = t.kernels[0].name;
  CHECK(nvscope::kernel_name(t, a, nvscope::name_form::base) == "axpy_t");
  CHECK(nvscope::kernel_name(t, a, nvscope::name_form::mangled) == "_Z6axpy_tIfLi4EEvPT_PKS0_S0_i");
  // nsys's spelling, through libcufilt or, without it, through nsys_spelling.hpp's rules
  CHECK(nvscope::kernel_name(t, a, nvscope::name_form::demangled) == "void axpy_t<float, (int)4>(T1 *, const T1 *, T1, int)");
  const auto c = t.kernels[1].name;
  CHECK(t.kernel_names.count(c) == 0); // one spelling for all three forms
  for (auto form : {nvscope::name_form::demangled, nvscope::name_form::base, nvscope::name_form::mangled})
    CHECK(nvscope::kernel_name(t, c, form) == "plain_c_kernel");
}
