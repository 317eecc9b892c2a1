// nvscope-target: nvscope
#pragma once

// Kernel names demangled in the spelling of NVIDIA's demangler (`__cu_demangle`, what nsys
// prints), for builds without the toolkit's libcufilt.a. The C++ runtime's `__cxa_demangle`
// cannot be respelled into it: it replaces each template parameter in a parameter list by its
// argument (`float*` where nsys prints `T1 *`), and which `float` came from `T1` is not in
// its output. Debian's libiberty (`cplus_demangle`) is the same demangler as libstdc++'s
// `__cxa_demangle`, with the same spelling, and LLVM's spells like it too. So this reads the
// mangled name itself (the Itanium C++ ABI's grammar, the productions kernels use) and spells
// each part as NVIDIA's demangler does; the rules are the `spell_*` functions, each named by
// the nsys spelling it produces. A name holding a production outside them (function and
// array types, expressions, ABI tags, constructors, most operators) gets no spelling here,
// and the caller falls back to `__cxa_demangle`.
//
// A pure function over strings: no CUDA, no runtime; tests/collect/name_spelling_test.cpp
// checks each rule and the names nsys printed (tests/collect/data).

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nvscope {
inline namespace v1 {
namespace detail {

// ---- The spelling rules -------------------------------------------------------------------

// `T1`, `T2`, ...: a template parameter (`T_`, `T0_`, ...) by its position, never replaced
// by its argument.
inline std::string spell_template_param(std::size_t index) { return "T" + std::to_string(index + 1); }

// Whether a `*` or `&` follows `t` with no space: after another star or ampersand, and after
// a type the mangled name wrote as a substitution of a name (`glued`, next rule).
inline bool glues(const std::string& t, bool glued) {
  return glued || (!t.empty() && (t.back() == '*' || t.back() == '&' || t.back() == ' '));
}

// `T *` and `T **`: a space before the first star, none between stars; `c10d::NCCLComm*` and
// `const c10::IValue&` where the type pointed to repeats, as a substitution, a prefix of a
// name (`PS0_` in `c10d::NCCLComm::split(PS0_)`) or a template given arguments; `const
// __nv_bfloat16 *` where it repeats a class named as a type.
inline std::string spell_pointer(const std::string& t, bool glued) { return t + (glues(t, glued) ? "*" : " *"); }

// `T &` and `T &&`, glued as pointers are.
inline std::string spell_reference(const std::string& t, bool glued, bool rvalue) {
  return t + (glues(t, glued) ? "" : " ") + (rvalue ? "&&" : "&");
}

// `const T` (`const T1 *`, `const at::TensorBase &`); `T *const ` for a const pointer, with
// the space NVIDIA's demangler leaves after it (`std::pair<void *const , void *>`).
inline std::string spell_cv(const std::string& t, const std::string& cv) {
  if (cv.empty()) return t;
  if (!t.empty() && (t.back() == '*' || t.back() == '&')) return t + cv + " ";
  return cv + " " + t;
}

// `(int)4`, `(int)-2`, `(bool)1`, `(unsigned long)3`, `(at_cuda_detail::cub::SortOrder)0`:
// a non-type template argument as a cast of its value.
inline std::string spell_literal(const std::string& type, std::string_view value) {
  return "(" + type + ")" + std::string(value);
}

// `<unnamed>`: the anonymous namespace (mangled `_GLOBAL__N_...`).
inline std::string spell_source_name(std::string_view id) {
  return id.substr(0, 10) == "_GLOBAL__N" ? "<unnamed>" : std::string(id);
}

// `cuda::std::__4::plus` for `_INTERNAL_8e1f..._cu_..::cuda::std::__4::plus`: the namespace
// nvcc wraps around a translation unit's internal entities is not printed.
inline bool is_internal_namespace(std::string_view id) { return id.substr(0, 10) == "_INTERNAL_"; }

// `g(int)::x (instance 2)`: a local entity with a discriminator (`_0`, the second of its name
// in its function), numbered from 1.
inline std::string spell_local_instance(const std::string& entity, std::size_t instance) {
  return entity + " (instance " + std::to_string(instance) + ")";
}

// `[lambda(int, float) (instance 1)]`: a closure type by its parameters and its number
// among the closures of its scope, counted from 1.
inline std::string spell_lambda(const std::string& params, std::size_t instance) {
  return "[lambda(" + params + ") (instance " + std::to_string(instance) + ")]";
}

// `operator ()`: the call operator, with a space.
inline std::string spell_call_operator() { return "operator ()"; }

// `<float, (int)4>` and `std::plus<c10::BFloat16>>`: arguments after ", ", no space between
// closing brackets; an empty argument pack is an empty argument (`std::lock<std::mutex, >`).
inline std::string spell_template_args(const std::vector<std::string>& args) {
  std::string s = "<";
  for (std::size_t i = 0; i < args.size(); ++i) s += (i ? ", " : "") + args[i];
  return s + ">";
}

// `void f<float>(T1 *, int)`, `g(int)` and `...::operator ()() const`: a function template
// shows its return type, also where it is the scope of a local name (a lambda's); a function
// with no parameters shows `()`; a const member function ends in ` const`.
inline std::string spell_function(const std::string& ret, const std::string& name, const std::string& params,
                                  const std::string& cv) {
  return (ret.empty() ? "" : ret + " ") + name + "(" + params + ")" + (cv.empty() ? "" : " " + cv);
}

// `T1...`: a pack expansion.
inline std::string spell_pack_expansion(const std::string& t) { return t + "..."; }

// `unsigned long long`, `signed char`, ...: the builtin type a mangled letter stands for, or
// nullptr.
inline const char* spell_builtin(char c) noexcept {
  switch (c) {
  case 'v': return "void";
  case 'w': return "wchar_t";
  case 'b': return "bool";
  case 'c': return "char";
  case 'a': return "signed char";
  case 'h': return "unsigned char";
  case 's': return "short";
  case 't': return "unsigned short";
  case 'i': return "int";
  case 'j': return "unsigned int";
  case 'l': return "long";
  case 'm': return "unsigned long";
  case 'x': return "long long";
  case 'y': return "unsigned long long";
  case 'n': return "__int128";
  case 'o': return "unsigned __int128";
  case 'f': return "float";
  case 'd': return "double";
  case 'e': return "long double";
  default: return nullptr;
  }
}

// ---- The reader: the Itanium ABI's productions that kernel names use -----------------------

class nsys_spelling_reader {
public:
  explicit nsys_spelling_reader(std::string_view mangled) : s_(mangled) {}

  // The spelled name, or nullopt where `mangled` is not `_Z<encoding>` of the productions
  // read here.
  std::optional<std::string> read() {
    if (s_.substr(0, 2) != "_Z") return std::nullopt;
    i_ = 2;
    std::string out = encoding();
    if (!ok_ || i_ != s_.size()) return std::nullopt;
    return out;
  }

private:
  // A name as read so far: its text, whether it ends in template arguments (a function
  // template shows its return type), and a member function's qualifier.
  struct name_part {
    std::string text;
    bool templated = false;
    std::string cv = {};
  };

  std::string_view s_;
  std::size_t i_ = 0;
  bool ok_ = true;
  // The substitution candidates, in the ABI's order. `glues`: a `*` or `&` after the candidate,
  // when a substitution repeats it, takes no space (spell_pointer): so for a name's prefix
  // (`c10d::NCCLComm` of `c10d::NCCLComm::split`) and for a substitution given template
  // arguments, not for a class named as a type (`__nv_bfloat16`) or a template parameter.
  struct candidate {
    std::string text;
    bool glues;
  };
  std::vector<candidate> subs_;
  bool substituted_glues_ = false; // of the candidate the last substitution() read
  int depth_ = 0;                 // nesting, bounded against hostile input
  // A spelling longer than this is refused: substitutions repeat text, so a short hostile
  // name could otherwise spell one that doubles with each repeat.
  static constexpr std::size_t max_spelling = std::size_t(1) << 20;

  char peek(std::size_t ahead = 0) const noexcept { return i_ + ahead < s_.size() ? s_[i_ + ahead] : '\0'; }
  bool eat(char c) noexcept {
    if (peek() != c) return false;
    ++i_;
    return true;
  }
  std::string fail() {
    ok_ = false;
    i_ = s_.size();
    return {};
  }
  static bool digit(char c) noexcept { return c >= '0' && c <= '9'; }
  static bool upper(char c) noexcept { return c >= 'A' && c <= 'Z'; }

  std::size_t number() {
    std::size_t n = 0;
    if (!digit(peek())) return fail(), 0;
    while (digit(peek()) && n < (std::size_t(1) << 40)) n = n * 10 + std::size_t(s_[i_++] - '0');
    return n;
  }

  // <encoding> ::= <name> <bare-function-type> | <name> (an object: no parameters)
  std::string encoding() {
    if (++depth_ > 64) return fail();
    name_part n = name();
    std::string out = n.text;
    if (ok_ && peek() != '\0' && peek() != 'E') {
      const std::string ret = n.templated ? type() : std::string();
      out = spell_function(ret, n.text, params(), n.cv);
    }
    --depth_;
    return out;
  }

  // Parameter types up to the end or an `E`; a lone `v` is no parameters.
  std::string params() {
    if (peek() == 'v' && (peek(1) == '\0' || peek(1) == 'E')) return ++i_, std::string();
    std::string out;
    while (ok_ && peek() != '\0' && peek() != 'E') out += (out.empty() ? "" : ", ") + type();
    return out;
  }

  name_part name() {
    switch (peek()) {
    case 'N': return nested_name();
    case 'Z': return local_name();
    case 'S': {
      const bool std_name = peek(1) == 't';
      name_part n{std_name ? (i_ += 2, "std::" + unqualified_name()) : substitution()};
      if (peek() == 'I') {
        if (std_name) subs_.push_back({n.text, true});
        n.text += template_args();
        n.templated = true;
      }
      return n;
    }
    default: {
      name_part n{unqualified_name()};
      if (peek() == 'I') {
        subs_.push_back({n.text, true});
        n.text += template_args();
        n.templated = true;
      }
      return n;
    }
    }
  }

  // N [<CV-qualifiers>] <prefix>... E: each component but the last, and each that is not
  // itself a substitution, is a substitution candidate.
  name_part nested_name() {
    eat('N');
    name_part n;
    n.cv = qualifiers();
    if (peek() == 'R' || peek() == 'O') return {fail()};
    while (ok_ && !eat('E')) {
      const char c = peek();
      if (c == 'I') {
        if (n.text.empty()) return {fail()};
        n.text += template_args();
        n.templated = true;
      } else {
        const std::string part = c == 'S' ? (peek(1) == 't' ? (i_ += 2, std::string("std")) : substitution())
                                 : c == 'T' ? template_param()
                                            : unqualified_name();
        const bool hidden = n.text.empty() && c != 'S' && is_internal_namespace(part) && peek() != 'E';
        if (!hidden) n.text += (n.text.empty() ? "" : "::") + part;
        n.templated = false;
      }
      if (c != 'S' && peek() != 'E') subs_.push_back({n.text, true});
      if (peek() == '\0') return {fail()};
    }
    return n;
  }

  // Z <encoding> E <entity> [<discriminator>]: the entity spelled after its function.
  name_part local_name() {
    eat('Z');
    const std::string scope = encoding();
    if (!eat('E') || peek() == 's' || peek() == 'd') return {fail()};
    const bool closure = peek() == 'U';
    name_part n = name();
    if (!closure && eat('_')) {
      std::size_t d = 0;
      if (eat('_')) {
        d = number();
        if (!eat('_')) return {fail()};
      } else if (digit(peek())) {
        d = std::size_t(s_[i_++] - '0');
      } else {
        return {fail()};
      }
      n.text = spell_local_instance(n.text, d + 2);
    }
    n.text = scope + "::" + n.text;
    return n;
  }

  // " const", " volatile" and the like, as the member function's qualifier.
  std::string qualifiers() {
    std::string cv;
    if (eat('r')) cv = "__restrict__";
    if (eat('V')) cv = cv.empty() ? "volatile" : "volatile " + cv;
    if (eat('K')) cv = cv.empty() ? "const" : "const " + cv;
    return cv;
  }

  std::string unqualified_name() {
    eat('L'); // internal linkage: spelled as any other name
    if (digit(peek())) {
      const std::size_t len = number();
      if (!ok_ || len > s_.size() - i_) return fail();
      const std::string_view id = s_.substr(i_, len);
      i_ += len;
      return spell_source_name(id);
    }
    if (peek() == 'U' && peek(1) == 'l') return lambda();
    if (peek() == 'c' && peek(1) == 'l') return i_ += 2, spell_call_operator();
    return fail();
  }

  // Ul <parameter types> E [<number>] _
  std::string lambda() {
    i_ += 2;
    const std::string p = params();
    if (!eat('E')) return fail();
    const std::size_t instance = peek() == '_' ? 1 : number() + 2;
    if (!ok_ || !eat('_')) return fail();
    return spell_lambda(p, instance);
  }

  // T_, T<n>_
  std::string template_param() {
    eat('T');
    const std::size_t index = eat('_') ? 0 : number() + 1;
    if (!ok_ || (index > 0 && !eat('_'))) return fail();
    return spell_template_param(index);
  }

  // S_, S<seq-id>_, and the standard abbreviations that are plain names.
  std::string substitution() {
    eat('S');
    substituted_glues_ = true;
    if (eat('a')) return "std::allocator";
    if (eat('b')) return "std::basic_string";
    std::size_t index = 0;
    if (!eat('_')) {
      std::size_t seq = 0;
      while (digit(peek()) || upper(peek())) {
        const char c = s_[i_++];
        seq = seq * 36 + std::size_t(digit(c) ? c - '0' : c - 'A' + 10);
        if (seq > subs_.size()) return fail();
      }
      if (!eat('_')) return fail();
      index = seq + 1;
    }
    if (index >= subs_.size()) return fail();
    substituted_glues_ = subs_[index].glues;
    return subs_[index].text;
  }

  // I <template-arg>+ E; an argument pack (J ... E) spells as its elements.
  std::string template_args() {
    eat('I');
    std::vector<std::string> args;
    while (ok_ && !eat('E')) {
      if (peek() == '\0') return fail();
      if (eat('J')) {
        if (peek() == 'E') args.emplace_back();
        while (ok_ && !eat('E')) {
          if (peek() == '\0') return fail();
          args.push_back(template_arg());
        }
      } else {
        args.push_back(template_arg());
      }
    }
    std::string out = spell_template_args(args);
    return out.size() > max_spelling ? fail() : out;
  }

  // A type, or L <type> [n] <digits> E: a value.
  std::string template_arg() {
    if (!eat('L')) return type();
    if (peek() == '_') return fail(); // an external name as argument
    const std::string t = type();
    const std::size_t begin = i_;
    eat('n');
    number();
    const std::string_view value = s_.substr(begin, i_ - begin);
    if (!ok_ || !eat('E')) return fail();
    std::string v(value);
    if (!v.empty() && v[0] == 'n') v[0] = '-';
    return spell_literal(t, v);
  }

  // A type as spelled, and whether a `*` or `&` after it glues (spell_pointer).
  struct typed {
    std::string text;
    bool glued = false;
  };

  std::string type() { return typed_type().text; }

  // <type>; every type but a builtin, and but a substitution used as it is, becomes a
  // substitution candidate once read.
  typed typed_type() {
    if (++depth_ > 64) return {fail()};
    typed t = type_body();
    --depth_;
    if (t.text.size() > max_spelling) return {fail()};
    return t;
  }

  typed type_body() {
    const char c = peek();
    if (const char* builtin = spell_builtin(c)) return {(++i_, builtin)};
    typed t;
    bool glued = false; // as a candidate
    if (c == 'r' || c == 'V' || c == 'K') {
      const std::string cv = qualifiers();
      t = typed_type();
      t.text = spell_cv(t.text, cv);
    } else if (c == 'P' || c == 'R' || c == 'O') {
      ++i_;
      const typed inner = typed_type();
      t.text = c == 'P' ? spell_pointer(inner.text, inner.glued) : spell_reference(inner.text, inner.glued, c == 'O');
    } else if (c == 'D' && peek(1) == 'p') {
      i_ += 2;
      t.text = spell_pack_expansion(type());
    } else if (c == 'T') {
      t.text = template_param();
      if (peek() == 'I') subs_.push_back({t.text, false}), t.text += template_args();
    } else if (c == 'S' && (digit(peek(1)) || upper(peek(1)) || peek(1) == '_')) {
      t.text = substitution();
      t.glued = glued = substituted_glues_;
      if (peek() != 'I') return t;
      t.text += template_args();
    } else if (c == 'N' || c == 'Z' || c == 'S' || digit(c)) {
      const bool abbreviation = c == 'S' && peek(1) != 't';
      const name_part n = name();
      if (abbreviation && !n.templated) return {n.text}; // Sa, Sb: not a candidate
      t.glued = glued = abbreviation;
      t.text = n.text;
    } else {
      return {fail()};
    }
    if (ok_) subs_.push_back({t.text, glued});
    return t;
  }
};

// `mangled` spelled as NVIDIA's demangler spells it, or nullopt (not mangled, or a production
// these rules do not spell).
inline std::optional<std::string> demangle_nsys_spelling(std::string_view mangled) {
  return nsys_spelling_reader(mangled).read();
}

} // namespace detail
} // namespace v1
} // namespace nvscope
