//===- TemplateTests.cpp - tests of the bundle template engine ------------===//
//
// fillTemplate (Template.h): substitution, sections, nesting, the lines
// that section tags stand on, and the errors that must not become output.
//
//===----------------------------------------------------------------------===//

#include "Template.h"

#include "lowbit/error.h"

#include <gtest/gtest.h>

namespace lowbit::cli {
namespace {

/// The message fillTemplate throws for `text`, or "" when it fills.
std::string errorOf(std::string_view text, const TemplateValues &values) {
  try {
    fillTemplate("t.in", text, values);
  } catch (const Error &e) {
    return e.what();
  }
  return "";
}

TEST(Template, Substitutes) {
  TemplateValues v;
  v.set("name", "lowbit").set("count", int64_t(3)).set("empty", "");
  EXPECT_EQ(fillTemplate("t.in", "{{name}}_bundle: {{count}}{{empty}}.\n", v),
            "lowbit_bundle: 3.\n");
  EXPECT_EQ(fillTemplate("t.in", "no tags { } }}\n", v), "no tags { } }}\n");
  // A value is inserted as it is: no escaping, no tags inside it.
  v.set("raw", "\"{{name}}\"\\");
  EXPECT_EQ(fillTemplate("t.in", "{{raw}}", v), "\"{{name}}\"\\");
}

TEST(Template, BraceRunsOpenTheLastTag) {
  TemplateValues v;
  v.set("M", int64_t(100)).set("K", int64_t(256));
  EXPECT_EQ(fillTemplate("t.in", "{{{M}}, {{K}}}, {}", v), "{100, 256}, {}");
  EXPECT_EQ(fillTemplate("t.in", "{{{{M}}}}", v), "{{100}}");
}

TEST(Template, SectionsRepeatPerItem) {
  TemplateValues v;
  v.set("sep", ", ");
  v.add("shapes").set("M", int64_t(1)).set("K", int64_t(2));
  v.add("shapes").set("M", int64_t(3)).set("K", int64_t(4));
  v.setList("none");
  // Inside a section, names resolve in the item, then outward (sep).
  EXPECT_EQ(
      fillTemplate("t.in", "[{{#shapes}}{{M}}x{{K}}{{sep}}{{/shapes}}]", v),
      "[1x2, 3x4, ]");
  EXPECT_EQ(fillTemplate("t.in", "[{{#none}}x{{/none}}]", v), "[]");
  EXPECT_EQ(fillTemplate("t.in", "{{^none}}empty{{/none}}", v), "empty");
  EXPECT_EQ(fillTemplate("t.in", "{{^shapes}}empty{{/shapes}}", v), "");
}

TEST(Template, Flags) {
  TemplateValues v;
  v.setFlag("gpu", true).setFlag("cpu", false);
  EXPECT_EQ(fillTemplate("t.in",
                         "{{#gpu}}G{{/gpu}}{{#cpu}}C{{/cpu}}"
                         "{{^gpu}}g{{/gpu}}{{^cpu}}c{{/cpu}}",
                         v),
            "Gc");
  v.setFlag("gpu", false);
  EXPECT_EQ(fillTemplate("t.in", "{{#gpu}}G{{/gpu}}{{^gpu}}g{{/gpu}}", v), "g");
}

TEST(Template, NestedSections) {
  TemplateValues v;
  v.set("bundle", "b");
  TemplateValues &avx2 = v.add("tables");
  avx2.set("target", "avx2");
  avx2.add("kernels").set("fn", "f1");
  avx2.add("kernels").set("fn", "f2");
  TemplateValues &generic = v.add("tables");
  generic.set("target", "generic");
  generic.setList("kernels");
  EXPECT_EQ(fillTemplate("t.in",
                         "{{#tables}}{{target}}:"
                         "{{#kernels}} {{bundle}}.{{target}}.{{fn}}{{/kernels}}"
                         "{{^kernels}} none{{/kernels}};{{/tables}}",
                         v),
            "avx2: b.avx2.f1 b.avx2.f2;generic: none;");
}

TEST(Template, StandaloneTagLinesLeaveNothing) {
  TemplateValues v;
  v.add("items").set("x", "a");
  v.add("items").set("x", "b");
  v.setFlag("on", true);
  // Section and comment tags alone on a line (indented or not) drop the
  // line; a value tag and tags sharing a line with text keep it.
  EXPECT_EQ(fillTemplate("t.in",
                         "begin\n"
                         "{{! a comment\n    over two lines }}\n"
                         "  {{#items}}\n"
                         "  - {{x}}\n"
                         "  {{/items}}\n"
                         "{{#on}}on{{/on}}\n"
                         "{{#on}}\t\n"
                         "end {{! kept line }}\n"
                         "{{/on}}",
                         v),
            "begin\n  - a\n  - b\non\nend \n");
}

TEST(Template, UnknownNameIsAnError) {
  TemplateValues v;
  v.add("items").set("x", "a");
  EXPECT_EQ(errorOf("line 1\n{{nmae}}\n", v), "t.in:2: unknown name 'nmae'");
  EXPECT_EQ(errorOf("{{#nosuch}}x{{/nosuch}}", v),
            "t.in:1: unknown name 'nosuch'");
  // An item's names are not visible outside its section.
  EXPECT_EQ(errorOf("{{#items}}{{x}}{{/items}}{{x}}", v),
            "t.in:1: unknown name 'x'");
}

TEST(Template, KindMismatchIsAnError) {
  TemplateValues v;
  v.set("name", "n").add("items");
  EXPECT_EQ(errorOf("{{items}}", v),
            "t.in:1: 'items' is a list: use {{#items}}");
  EXPECT_EQ(errorOf("{{#name}}x{{/name}}", v),
            "t.in:1: 'name' is a text, not a list");
  EXPECT_THROW(v.setList("name"), Error);
  EXPECT_THROW(v.set("items", "x"), Error);
}

TEST(Template, MalformedTemplatesAreErrors) {
  TemplateValues v;
  v.setFlag("a", false).setFlag("b", false);
  // Errors are found whether or not the section would render.
  EXPECT_EQ(errorOf("x\n{{#a}}\ny", v), "t.in:2: {{#a}} is never closed");
  EXPECT_EQ(errorOf("{{#a}}{{#b}}{{/a}}{{/b}}", v),
            "t.in:1: {{/a}} while {{#b}} of line 1 is open");
  EXPECT_EQ(errorOf("x{{/a}}", v), "t.in:1: {{/a}} closes no section");
  EXPECT_EQ(errorOf("x {{a", v), "t.in:1: '{{' without '}}'");
  EXPECT_EQ(errorOf("{{}}", v), "t.in:1: empty tag");
  EXPECT_EQ(errorOf("{{ a }}", v),
            "t.in:1: ' a ' is not a name (letters, digits, _)");
}

} // namespace
} // namespace lowbit::cli
