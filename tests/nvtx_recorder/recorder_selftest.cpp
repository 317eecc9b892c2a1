// The recorder logs raw NVTX calls faithfully: kinds, domains, messages, attributes, depth.
#include <doctest/doctest.h>

#include "recorder_client.hpp"

#include <string>

using nvscope_test::recorder;

TEST_CASE("recorder logs raw NVTX calls with their attributes") {
  auto& rec = recorder::instance();
  REQUIRE_MESSAGE(rec.attached(), rec.why_not());
  rec.clear();

  nvtxDomainHandle_t d = nvtxDomainCreateA("selftest");
  nvtxStringHandle_t s = nvtxDomainRegisterStringA(d, "registered\tname");
  nvtxEventAttributes_t a{};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  a.message.registered = s;
  a.colorType = NVTX_COLOR_ARGB;
  a.color = 0xFF102030u;
  a.category = 7;
  a.payloadType = NVTX_PAYLOAD_TYPE_INT64;
  a.payload.llValue = -5;
  nvtxRangePushA("plain");
  nvtxDomainRangePushEx(d, &a);
  nvtxDomainRangePop(d);
  nvtxRangePop();
  nvtxRangePop(); // one too many: logged as an error, not a crash

  const auto ev = rec.events();
  REQUIRE(ev.size() == 7);
  CHECK(ev[0].kind == "domain_create");
  CHECK(ev[0].domain() == "selftest");
  CHECK(ev[1].kind == "register");
  CHECK(ev[1].msg() == "registered\tname");
  CHECK(ev[2].kind == "push");
  CHECK(ev[2].domain() == "");
  CHECK(ev[2].get("msgtype") == "ascii");
  CHECK(ev[2].msg() == "plain");
  CHECK(ev[2].get("depth") == "1");
  CHECK(ev[3].kind == "push");
  CHECK(ev[3].domain() == "selftest");
  CHECK(ev[3].get("msgtype") == "registered");
  CHECK(ev[3].msg() == "registered\tname");
  CHECK(ev[3].get("color") == "ff102030");
  CHECK(ev[3].get("category") == "7");
  CHECK(ev[3].get("payload") == "int64:-5");
  CHECK(ev[3].get("depth") == "1");
  CHECK_FALSE(ev[3].has("error"));
  CHECK(ev[4].kind == "pop");
  CHECK(ev[4].domain() == "selftest");
  CHECK(ev[5].kind == "pop");
  CHECK(ev[5].domain() == "");
  CHECK(ev[6].kind == "pop");
  CHECK(ev[6].get("error") == "pop_without_push");
  CHECK(rec.dropped() == 0);
}

TEST_CASE("recorder flags a string registered in another domain") {
  auto& rec = recorder::instance();
  REQUIRE_MESSAGE(rec.attached(), rec.why_not());
  nvtxDomainHandle_t a = nvtxDomainCreateA("a");
  nvtxDomainHandle_t b = nvtxDomainCreateA("b");
  nvtxStringHandle_t s = nvtxDomainRegisterStringA(a, "x");
  rec.clear();
  nvtxEventAttributes_t at{};
  at.version = NVTX_VERSION;
  at.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  at.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  at.message.registered = s;
  nvtxDomainMarkEx(b, &at);
  const auto ev = rec.events();
  REQUIRE(ev.size() == 1);
  CHECK(ev[0].kind == "mark");
  CHECK(ev[0].get("error") == "string_registered_in_other_domain");
}
