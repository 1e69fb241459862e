//===- Template.h - the text templates of `lowbit compile` ------*- C++ -*-===//
//
// A small logic-less template engine (a subset of Mustache) for the files of
// a bundle (tools/lowbit/bundle/*.in):
//
//   {{name}}               the text `name`
//   {{#name}}...{{/name}}  the enclosed text once per item of the list
//                          `name`; inside, names are looked up in the item,
//                          then outward (a flag is a list of one or none)
//   {{^name}}...{{/name}}  the enclosed text once when `name` is empty
//   {{! comment }}         nothing
//
// A line that holds only a section tag or a comment (and blanks) produces
// nothing, newline included, so that sections can stand on lines of their
// own. In a run of more than two braces the last two open the tag
// (`{{{M}}, ...}` is `{` then {{M}}), as C initializers need. There is no
// escaping: the caller puts text into C string literals escaped.
//
// An unknown name, a text used as a section or a list as a text, an
// unclosed or mismatched section are errors (lowbit::Error naming the
// template and the line), never silent output.
//
//===----------------------------------------------------------------------===//
#ifndef LOWBIT_TOOLS_LOWBIT_TEMPLATE_H
#define LOWBIT_TOOLS_LOWBIT_TEMPLATE_H

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace lowbit::cli {

/// The values a template is filled with: named texts and named lists of
/// nested values (the items that sections repeat).
class TemplateValues {
public:
  TemplateValues &set(const std::string &name, std::string text);
  TemplateValues &set(const std::string &name, const char *text) {
    return set(name, std::string(text));
  }
  TemplateValues &set(const std::string &name, int64_t number) {
    return set(name, std::to_string(number));
  }
  /// A list of one (empty) item when `on`, else an empty list.
  TemplateValues &setFlag(const std::string &name, bool on);
  /// Declares the list `name` (empty until `add`).
  TemplateValues &setList(const std::string &name);
  /// Appends an item to the list `name` (declared by the first call) and
  /// returns it; valid until the next add to the same list.
  TemplateValues &add(const std::string &name);

  /// The text `name` or nullptr; the list `name` or nullptr.
  const std::string *text(const std::string &name) const;
  const std::vector<TemplateValues> *list(const std::string &name) const;

private:
  std::map<std::string, std::string> texts;
  std::map<std::string, std::vector<TemplateValues>> lists;
};

/// `text`, the template called `name` (in error messages), filled with
/// `values`. Throws lowbit::Error "NAME:LINE: what is wrong".
std::string fillTemplate(std::string_view name, std::string_view text,
                         const TemplateValues &values);

} // namespace lowbit::cli

#endif // LOWBIT_TOOLS_LOWBIT_TEMPLATE_H
