//===- Template.cpp - the text templates of `lowbit compile` --------------===//

#include "Template.h"

#include "lowbit/error.h"

#include <cctype>

namespace lowbit::cli {

TemplateValues &TemplateValues::set(const std::string &name, std::string text) {
  if (lists.count(name))
    throw Error("template value '" + name + "' is a list, not a text");
  texts[name] = std::move(text);
  return *this;
}

TemplateValues &TemplateValues::setFlag(const std::string &name, bool on) {
  setList(name);
  lists[name].clear();
  if (on)
    add(name);
  return *this;
}

TemplateValues &TemplateValues::setList(const std::string &name) {
  if (texts.count(name))
    throw Error("template value '" + name + "' is a text, not a list");
  lists[name];
  return *this;
}

TemplateValues &TemplateValues::add(const std::string &name) {
  setList(name);
  return lists[name].emplace_back();
}

const std::string *TemplateValues::text(const std::string &name) const {
  auto it = texts.find(name);
  return it == texts.end() ? nullptr : &it->second;
}

const std::vector<TemplateValues> *
TemplateValues::list(const std::string &name) const {
  auto it = lists.find(name);
  return it == lists.end() ? nullptr : &it->second;
}

namespace {

/// A parsed template: text, a value, or a (possibly inverted) section.
struct Node {
  enum Kind { Text, Value, Section, Inverted } kind;
  std::string text; // Text: the text; otherwise the name
  size_t line = 0;
  std::vector<Node> children; // sections: the enclosed nodes
};

class Parser {
public:
  Parser(std::string_view name, std::string_view text)
      : name(name), text(text) {}

  std::vector<Node> parse() {
    std::vector<Node> root;
    // The open sections, innermost last; nodes go into the innermost.
    std::vector<Node *> open;
    std::string pending; // text since the last tag
    size_t pos = 0;
    auto into = [&]() -> std::vector<Node> & {
      return open.empty() ? root : open.back()->children;
    };
    auto flush = [&] {
      if (!pending.empty())
        into().push_back({Node::Text, std::move(pending), 0, {}});
      pending.clear();
    };
    while (true) {
      size_t start = text.find("{{", pos);
      if (start == std::string_view::npos) {
        pending += text.substr(pos);
        break;
      }
      while (start + 2 < text.size() && text[start + 2] == '{')
        ++start;
      const size_t line = lineOf(start);
      const size_t close = text.find("}}", start + 2);
      if (close == std::string_view::npos)
        fail(line, "'{{' without '}}'");
      std::string_view tag = text.substr(start + 2, close - start - 2);
      const char sigil = tag.empty() ? '\0' : tag.front();
      const bool control =
          sigil == '#' || sigil == '^' || sigil == '/' || sigil == '!';
      pending += text.substr(pos, start - pos);
      pos = close + 2;
      if (control)
        standalone(start, pos, pending);
      if (sigil == '!')
        continue;
      const std::string tagName =
          checkedName(control ? tag.substr(1) : tag, line);
      flush();
      if (sigil == '#' || sigil == '^') {
        into().push_back(
            {sigil == '#' ? Node::Section : Node::Inverted, tagName, line, {}});
        open.push_back(&into().back());
      } else if (sigil == '/') {
        if (open.empty())
          fail(line, "{{/" + tagName + "}} closes no section");
        if (open.back()->text != tagName)
          fail(line, "{{/" + tagName + "}} while {{#" + open.back()->text +
                         "}} of line " + std::to_string(open.back()->line) +
                         " is open");
        open.pop_back();
      } else {
        into().push_back({Node::Value, tagName, line, {}});
      }
    }
    flush();
    if (!open.empty())
      fail(open.back()->line, "{{#" + open.back()->text + "}} is never closed");
    return root;
  }

  [[noreturn]] void fail(size_t line, const std::string &message) const {
    throw Error(std::string(name) + ":" + std::to_string(line) + ": " +
                message);
  }

private:
  std::string_view name, text;
  size_t counted = 0, lines = 1; // the line at offset `counted`

  size_t lineOf(size_t offset) {
    for (; counted < offset; ++counted)
      lines += text[counted] == '\n';
    return lines;
  }

  static bool blank(std::string_view s) {
    return s.find_first_not_of(" \t") == std::string_view::npos;
  }

  /// When the tag text[start, end) is alone on its line, drops the line:
  /// its indentation from `pending` and the rest through the newline.
  void standalone(size_t start, size_t &end, std::string &pending) const {
    const size_t lineStart = text.rfind('\n', start);
    const size_t from = lineStart == std::string_view::npos ? 0 : lineStart + 1;
    size_t newline = text.find('\n', end);
    if (newline == std::string_view::npos)
      newline = text.size();
    if (!blank(text.substr(from, start - from)) ||
        !blank(text.substr(end, newline - end)))
      return;
    pending.resize(pending.size() - (start - from));
    end = newline == text.size() ? newline : newline + 1;
  }

  std::string checkedName(std::string_view tag, size_t line) const {
    if (tag.empty())
      fail(line, "empty tag");
    for (char c : tag)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_')
        fail(line, "'" + std::string(tag) + "' is not a name (letters, " +
                       "digits, _)");
    return std::string(tag);
  }
};

void render(const Parser &parser, const std::vector<Node> &nodes,
            std::vector<const TemplateValues *> &scopes, std::string &out) {
  for (const Node &node : nodes) {
    if (node.kind == Node::Text) {
      out += node.text;
      continue;
    }
    const std::string *text = nullptr;
    const std::vector<TemplateValues> *list = nullptr;
    for (auto scope = scopes.rbegin(); scope != scopes.rend() && !text && !list;
         ++scope) {
      text = (*scope)->text(node.text);
      list = (*scope)->list(node.text);
    }
    if (!text && !list)
      parser.fail(node.line, "unknown name '" + node.text + "'");
    if (node.kind == Node::Value) {
      if (!text)
        parser.fail(node.line, "'" + node.text + "' is a list: use {{#" +
                                   node.text + "}}");
      out += *text;
      continue;
    }
    if (!list)
      parser.fail(node.line, "'" + node.text + "' is a text, not a list");
    if (node.kind == Node::Inverted) {
      if (list->empty())
        render(parser, node.children, scopes, out);
      continue;
    }
    for (const TemplateValues &item : *list) {
      scopes.push_back(&item);
      render(parser, node.children, scopes, out);
      scopes.pop_back();
    }
  }
}

} // namespace

std::string fillTemplate(std::string_view name, std::string_view text,
                         const TemplateValues &values) {
  Parser parser(name, text);
  const std::vector<Node> nodes = parser.parse();
  std::vector<const TemplateValues *> scopes = {&values};
  std::string out;
  render(parser, nodes, scopes, out);
  return out;
}

} // namespace lowbit::cli
