#pragma once

// Internal: which annotation mode this translation unit is built in.
//
// Everything whose body differs between the enabled and the compiled-out (NVSCOPE_DISABLE)
// builds lives in the inline namespace NVSCOPE_DETAIL_MODE, so that two translation units
// built in different modes never give one inline function two bodies (ODR): their symbols
// simply differ (nvscope::v1::annotate_on::... against nvscope::v1::annotate_off::...).

#if defined(NVSCOPE_DISABLE)
#define NVSCOPE_DETAIL_MODE annotate_off
#define NVSCOPE_DETAIL_ENABLED 0
#else
#define NVSCOPE_DETAIL_MODE annotate_on
#define NVSCOPE_DETAIL_ENABLED 1
#endif

#define NVSCOPE_DETAIL_CAT_(a, b) a##b
#define NVSCOPE_DETAIL_CAT(a, b) NVSCOPE_DETAIL_CAT_(a, b)
#define NVSCOPE_DETAIL_UNIQUE(prefix) NVSCOPE_DETAIL_CAT(prefix, __COUNTER__)
#define NVSCOPE_DETAIL_FIRST(first, ...) first

#if defined(__GNUC__) || defined(__clang__)
#define NVSCOPE_DETAIL_LIKELY(x) __builtin_expect(!!(x), 1)
#define NVSCOPE_DETAIL_PRINTF(fmt_index, first_arg) __attribute__((format(printf, fmt_index, first_arg)))
#define NVSCOPE_DETAIL_PRETTY_FUNCTION __PRETTY_FUNCTION__
#else
#define NVSCOPE_DETAIL_LIKELY(x) (x)
#define NVSCOPE_DETAIL_PRINTF(fmt_index, first_arg)
#if defined(_MSC_VER)
#define NVSCOPE_DETAIL_PRETTY_FUNCTION __FUNCSIG__
#else
#define NVSCOPE_DETAIL_PRETTY_FUNCTION __func__
#endif
#endif
