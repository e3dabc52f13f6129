--[==[ symattn.lua: a pandoc filter (pandoc >= 3) that turns a code block of class `symattn` into its worked solution.

    ```{.symattn lang=en digits=3 prose=plain}
    example = "mt"            # or a whole spec in TOML: [[sections]] ...
    ```

The block holds a spec (TOML; `example = "NAME"` alone asks for a built-in example); its attributes lang, digits,
prose and exact (exact=true) choose the rest. The filter runs `symattn render --format md` and puts the Markdown
back into the document as pandoc's own blocks (math, tables, text), so every writer (HTML, LaTeX/PDF, docx, EPUB,
revealjs) gets it. Each block's Markdown is cached in $SYMATTN_CACHE (else .symattn-cache/ in the working
folder) under a hash of the block, its options and symattn's version: a document built again runs symattn only
for the blocks that changed. A failure (never cached) becomes a visible callout (a Div of class callout-warning) naming symattn's one-line
error, not a failed build. An inline `sections[0].queries.love.weights[3]`{.symattn ref=mt digits=4} becomes that one number (ref: a built-in
example or a spec file; digits: decimals, default 4), rounded from the exact answer as `symattn check` reads it,
so a sentence cites what symattn computed. The Python that runs symattn is $SYMATTN_PYTHON, else python3. Modelled on
pandoc-ext/diagram. ]==]

local python = os.getenv("SYMATTN_PYTHON") or "python3"
local OPTIONS = { lang = "--lang", digits = "--digits", prose = "--prose" }

local function callout(message)
  local text = pandoc.Para({ pandoc.Strong("symattn: "), pandoc.Str(message) })
  return pandoc.Div({ text }, pandoc.Attr("", { "callout-warning", "symattn-error" }))
end

-- The spec of a block: `example = "NAME"` alone names a built-in example, else the text is the spec itself.
local function example_of(text)
  local stripped = text:gsub("#[^\n]*", ""):gsub("%s+", " ")
  return stripped:match('^ ?example ?= ?"([%w_%-]+)" ?$')
end

local function options_of(block)
  local args = {}
  for _, key in ipairs({ "lang", "digits", "prose" }) do
    if block.attributes[key] then
      table.insert(args, OPTIONS[key])
      table.insert(args, block.attributes[key])
    end
  end
  if block.attributes.exact == "true" then table.insert(args, "--exact") end
  return args
end

-- Run a command through sh, so that symattn's one-line error (on its standard error) comes back with the output.
local function run(args)
  return pcall(pandoc.pipe, "sh", { "-c", 'exec "$0" "$@" 2>&1', python, table.unpack(args) }, "")
end

local version = nil
local function symattn_version()
  if version == nil then
    local ok, out = run({ "-c", "import symattn; print(symattn.__version__)" })
    version = ok and out or "unknown"
  end
  return version
end

local function read(path)
  local file = io.open(path, "r")
  if not file then return nil end
  local text = file:read("a")
  file:close()
  return text
end

-- The block's Markdown from symattn, or nil and symattn's error.
local function markdown_of(block, options)
  local args = { "-m", "symattn", "render", "--format", "md", table.unpack(options) }
  return pandoc.system.with_temporary_directory("symattn", function(dir)
    local name = example_of(block.text)
    if name then
      table.insert(args, "--example")
      table.insert(args, name)
    else
      local spec = pandoc.path.join({ dir, "block.toml" })
      local file = assert(io.open(spec, "w"))
      file:write(block.text)
      file:close()
      table.insert(args, spec)
    end
    table.insert(args, "--out")
    table.insert(args, dir)
    local ok, result = run(args)
    if not ok then
      local message = tostring(result.output or result):gsub("^%s+", ""):gsub("%s+$", "")
      return nil, (message:match("symattn: error: ([^\n]*)") or message)
    end
    return read(pandoc.path.join({ dir, (name or "block") .. ".md" }))
  end)
end

-- A heat map's shades (░▒▓█ in the Markdown) as grey squares for LaTeX: the default LaTeX fonts have no shade
-- characters, and a missing character is silently left out of the PDF.
local GREYS = { [0x2591] = 25, [0x2592] = 50, [0x2593] = 75, [0x2588] = 100 }

local function latex_shades(str)
  local out, run, found = {}, {}, false
  local function flush()
    if #run > 0 then table.insert(out, pandoc.Str(utf8.char(table.unpack(run)))) end
    run = {}
  end
  for _, code in utf8.codes(str.text) do
    if GREYS[code] then
      found = true
      flush()
      table.insert(out, pandoc.RawInline("latex", string.format("\\textcolor{black!%d}{\\rule{0.7em}{0.7em}}", GREYS[code])))
    else
      table.insert(run, code)
    end
  end
  if not found then return nil end
  flush()
  return out
end

local function render(block)
  local options = options_of(block)
  local cache = os.getenv("SYMATTN_CACHE") or ".symattn-cache"
  local key = pandoc.sha1(symattn_version() .. "\0" .. table.concat(options, "\0") .. "\0" .. block.text)
  local cached = pandoc.path.join({ cache, key .. ".md" })
  local markdown = read(cached)
  if markdown == nil then
    local problem
    markdown, problem = markdown_of(block, options)
    if markdown == nil then return nil, problem end
    pandoc.system.make_directory(cache, true)
    local file = io.open(cached, "w")
    if file then
      file:write(markdown)
      file:close()
    end
  end
  local blocks = pandoc.read(markdown, "markdown").blocks
  if FORMAT:match("latex") or FORMAT:match("beamer") then
    blocks = blocks:walk({ Str = latex_shades })
  end
  return blocks
end

-- One answer, cached like a block's Markdown.
local function value_of(code)
  local args = { "-m", "symattn.filters.value", code.attributes.ref or "", code.text,
                 "--digits", code.attributes.digits or "4" }
  local cache = os.getenv("SYMATTN_CACHE") or ".symattn-cache"
  local cached = pandoc.path.join({ cache, pandoc.sha1(symattn_version() .. "\0" .. table.concat(args, "\0")) .. ".txt" })
  local text = read(cached)
  if text == nil then
    local ok, result = run(args)
    if not ok then
      local message = tostring(result.output or result):gsub("^%s+", ""):gsub("%s+$", "")
      return nil, (message:match("symattn: error: ([^\n]*)") or message)
    end
    text = result:gsub("%s+$", "")
    pandoc.system.make_directory(cache, true)
    local file = io.open(cached, "w")
    if file then
      file:write(text)
      file:close()
    end
  end
  return text
end

function Code(code)
  if not code.classes:includes("symattn") then return nil end
  local text, problem = value_of(code)
  if text == nil then
    return pandoc.Span({ pandoc.Strong("symattn: " .. problem) }, pandoc.Attr("", { "symattn-error" }))
  end
  return pandoc.Span({ pandoc.Str(text) }, pandoc.Attr("", { "symattn" }))
end

function CodeBlock(block)
  if not block.classes:includes("symattn") then return nil end
  local blocks, problem = render(block)
  if blocks == nil then return callout(problem) end
  return pandoc.Div(blocks, pandoc.Attr("", { "symattn" }))
end
