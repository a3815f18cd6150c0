"""report.html.j2 compiled by jinja2 (generated: do not edit).

Regenerate after changing the template, jinja2 or the environment's options:
``python -m accel_drc.regenerate``
(a stale copy is ignored: the report compiles the template itself).
"""

KEY = '929f158cd7ce07cfa38a035ca03084bc5b46a449723694237c010a71fefbb2dc'

from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'report.html.j2'

def root(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    l_0_tool_version = resolve('tool_version')
    l_0_title = resolve('title')
    l_0_css = resolve('css')
    l_0_pattern_defs = resolve('pattern_defs')
    l_0_verdict = resolve('verdict')
    l_0_unwaived_errors = resolve('unwaived_errors')
    l_0_unverified_errors = resolve('unverified_errors')
    l_0_board_name = resolve('board_name')
    l_0_cls = resolve('cls')
    l_0_overridden = resolve('overridden')
    l_0_auto_class = resolve('auto_class')
    l_0_auto_conf = resolve('auto_conf')
    l_0_not_accelerator = resolve('not_accelerator')
    l_0_class_note = resolve('class_note')
    l_0_count_phrases = resolve('count_phrases')
    l_0_total = resolve('total')
    l_0_editor_note = resolve('editor_note')
    l_0_board_file = resolve('board_file')
    l_0_sha256 = resolve('sha256')
    l_0_date = resolve('date')
    l_0_kicad_drc = resolve('kicad_drc')
    l_0_packs_text = resolve('packs_text')
    l_0_packs = resolve('packs')
    l_0_coverage = resolve('coverage')
    l_0_rails = resolve('rails')
    l_0_irdrop = resolve('irdrop')
    l_0_loss = resolve('loss')
    l_0_via_stubs = resolve('via_stubs')
    l_0_references = resolve('references')
    l_0_checks = resolve('checks')
    l_0_finding_layers = resolve('finding_layers')
    l_0_layers = resolve('layers')
    l_0_board_drawings = resolve('board_drawings')
    l_0_heat_layers = resolve('heat_layers')
    l_0_board_svg = resolve('board_svg')
    l_0_grid_mm = resolve('grid_mm')
    l_0_warnings = resolve('warnings')
    l_0_scores = resolve('scores')
    l_0_board = resolve('board')
    l_0_signal_nets = resolve('signal_nets')
    l_0_evidence = resolve('evidence')
    l_0_classes = resolve('classes')
    l_0_stackup = resolve('stackup')
    l_0_stackup_svg = resolve('stackup_svg')
    l_0_status_counts = resolve('status_counts')
    l_0_cannot_verify = resolve('cannot_verify')
    l_0_waivers = resolve('waivers')
    l_0_rule_runs = resolve('rule_runs')
    l_0_data_json = resolve('data_json')
    l_0_js = resolve('js')
    l_0_nw = missing
    try:
        t_1 = environment.filters['abs']
    except KeyError:
        @internalcode
        def t_1(*unused):
            raise TemplateRuntimeError("No filter named 'abs' found.")
    try:
        t_2 = environment.filters['dictsort']
    except KeyError:
        @internalcode
        def t_2(*unused):
            raise TemplateRuntimeError("No filter named 'dictsort' found.")
    try:
        t_3 = environment.filters['format']
    except KeyError:
        @internalcode
        def t_3(*unused):
            raise TemplateRuntimeError("No filter named 'format' found.")
    try:
        t_4 = environment.filters['join']
    except KeyError:
        @internalcode
        def t_4(*unused):
            raise TemplateRuntimeError("No filter named 'join' found.")
    try:
        t_5 = environment.filters['length']
    except KeyError:
        @internalcode
        def t_5(*unused):
            raise TemplateRuntimeError("No filter named 'length' found.")
    try:
        t_6 = environment.filters['num']
    except KeyError:
        @internalcode
        def t_6(*unused):
            raise TemplateRuntimeError("No filter named 'num' found.")
    try:
        t_7 = environment.filters['replace']
    except KeyError:
        @internalcode
        def t_7(*unused):
            raise TemplateRuntimeError("No filter named 'replace' found.")
    try:
        t_8 = environment.filters['string']
    except KeyError:
        @internalcode
        def t_8(*unused):
            raise TemplateRuntimeError("No filter named 'string' found.")
    try:
        t_9 = environment.tests['defined']
    except KeyError:
        @internalcode
        def t_9(*unused):
            raise TemplateRuntimeError("No test named 'defined' found.")
    try:
        t_10 = environment.tests['none']
    except KeyError:
        @internalcode
        def t_10(*unused):
            raise TemplateRuntimeError("No test named 'none' found.")
    pass
    yield '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<meta name="viewport" content="width=device-width, initial-scale=1">\n<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; script-src \'unsafe-inline\'; style-src \'unsafe-inline\'; img-src data:; connect-src \'none\'; font-src \'none\'; base-uri \'none\'; form-action \'none\'">\n<meta name="referrer" content="no-referrer">\n<meta name="generator" content="accel-drc '
    yield escape((undefined(name='tool_version') if l_0_tool_version is missing else l_0_tool_version))
    yield '">\n<title>'
    yield escape((undefined(name='title') if l_0_title is missing else l_0_title))
    yield '</title>\n<style>\n'
    yield escape((undefined(name='css') if l_0_css is missing else l_0_css))
    yield '\n</style>\n</head>\n<body>\n<a class="skip" href="#findings">Skip to the findings</a>\n'
    yield escape((undefined(name='pattern_defs') if l_0_pattern_defs is missing else l_0_pattern_defs))
    yield '\n<header class="banner '
    yield escape((undefined(name='verdict') if l_0_verdict is missing else l_0_verdict))
    yield '" role="banner">\n  <div class="verdict" aria-live="polite">\n'
    if ((undefined(name='verdict') if l_0_verdict is missing else l_0_verdict) == 'fail'):
        pass
        yield '    <span class="verdict-icon" aria-hidden="true">✖</span>\n    <span class="verdict-text">FAIL</span>\n    <span class="verdict-why">'
        yield escape((undefined(name='unwaived_errors') if l_0_unwaived_errors is missing else l_0_unwaived_errors))
        yield ' unwaived error'
        yield escape(('' if ((undefined(name='unwaived_errors') if l_0_unwaived_errors is missing else l_0_unwaived_errors) == 1) else 's'))
        yield '</span>\n'
    elif ((undefined(name='verdict') if l_0_verdict is missing else l_0_verdict) == 'unverified'):
        pass
        yield '    <span class="verdict-icon" aria-hidden="true">?</span>\n    <span class="verdict-text">NOT VERIFIED</span>\n'
        if (undefined(name='unverified_errors') if l_0_unverified_errors is missing else l_0_unverified_errors):
            pass
            yield '    <span class="verdict-why">no error violation, but '
            yield escape((undefined(name='unverified_errors') if l_0_unverified_errors is missing else l_0_unverified_errors))
            yield ' error check'
            yield escape(('' if ((undefined(name='unverified_errors') if l_0_unverified_errors is missing else l_0_unverified_errors) == 1) else 's'))
            yield ' could not be verified</span>\n'
        else:
            pass
            yield '    <span class="verdict-why">no rule checked anything (every rule disabled or nothing to examine)</span>\n'
    else:
        pass
        yield '    <span class="verdict-icon" aria-hidden="true">✔</span>\n    <span class="verdict-text">PASS</span>\n    <span class="verdict-why">no unwaived error violation</span>\n'
    yield '  </div>\n  <div class="banner-main">\n    <h1><span class="muted-h">accel-drc report ·</span> <span id="board-name">'
    yield escape((undefined(name='board_name') if l_0_board_name is missing else l_0_board_name))
    yield '</span></h1>\n    <p class="class-line">\n      Class <strong class="class-name">'
    yield escape(environment.getattr((undefined(name='cls') if l_0_cls is missing else l_0_cls), 'board_class'))
    yield '</strong>\n'
    if (undefined(name='overridden') if l_0_overridden is missing else l_0_overridden):
        pass
        yield '<span class="conf">'
        if ((undefined(name='auto_class') if l_0_auto_class is missing else l_0_auto_class) == 'general'):
            pass
            yield 'classifier said not an accelerator board'
        else:
            pass
            yield 'classifier said '
            yield escape((undefined(name='auto_class') if l_0_auto_class is missing else l_0_auto_class))
            yield ' ('
            yield escape(('%.0f' % ((undefined(name='auto_conf') if l_0_auto_conf is missing else l_0_auto_conf) * 100)))
            yield ' %)'
        yield '</span>\n'
    elif (not t_10((undefined(name='not_accelerator') if l_0_not_accelerator is missing else l_0_not_accelerator))):
        pass
        yield '<span class="conf">not an accelerator board</span>\n'
    else:
        pass
        yield '<span class="conf">confidence '
        yield escape(('%.0f' % (environment.getattr((undefined(name='cls') if l_0_cls is missing else l_0_cls), 'confidence') * 100)))
        yield ' %</span>'
    if (undefined(name='overridden') if l_0_overridden is missing else l_0_overridden):
        pass
        yield '<span class="tag override" title="the classifier\'s verdict was replaced">overridden by '
        yield escape(environment.getattr((undefined(name='cls') if l_0_cls is missing else l_0_cls), 'source'))
        yield '</span>'
    else:
        pass
        yield '<span class="tag">auto-classified</span>'
    yield '    </p>\n'
    if (undefined(name='class_note') if l_0_class_note is missing else l_0_class_note):
        pass
        yield '<p class="class-note">'
        yield escape((undefined(name='class_note') if l_0_class_note is missing else l_0_class_note))
        yield '</p>'
    yield '    <ul class="counts" aria-label="finding counts">\n'
    t_11 = 1
    for (l_1_sev, l_1_n, l_1_phrase) in (undefined(name='count_phrases') if l_0_count_phrases is missing else l_0_count_phrases):
        l_1_count_icons = resolve('count_icons')
        _loop_vars = {}
        pass
        if (l_1_sev in (undefined(name='count_icons') if l_1_count_icons is missing else l_1_count_icons)):
            pass
            yield '      <li class="c-'
            yield escape(l_1_sev)
            yield '" title="'
            yield escape(l_1_phrase)
            yield ' ('
            yield escape(l_1_sev)
            yield ' severity, not waived)"><span aria-hidden="true">'
            yield escape(environment.getitem((undefined(name='count_icons') if l_1_count_icons is missing else l_1_count_icons), l_1_sev))
            yield '</span> <b>'
            yield escape(l_1_n)
            yield '</b> '
            yield escape(l_1_phrase[(t_5(t_8(l_1_n)) + 1):])
            yield '</li>\n'
        else:
            pass
            yield '      <li class="c-waived c-'
            yield escape(l_1_sev)
            yield '" title="'
            yield escape(l_1_phrase)
            yield ': set aside '
            yield escape(('by a waiver of the project config' if (l_1_sev == 'waived') else 'by an exclusion in KiCad (Board Setup > Violation Severity, Exclusions), stored in the .kicad_pro'))
            yield '; not counted as errors"><span aria-hidden="true">⊘</span> <b>'
            yield escape(l_1_n)
            yield '</b> '
            yield escape(l_1_phrase[(t_5(t_8(l_1_n)) + 1):])
            yield '</li>\n'
        t_11 = 0
    l_1_sev = l_1_n = l_1_phrase = l_1_count_icons = missing
    if t_11:
        pass
        yield '      <li class="c-total">no findings</li>\n'
    yield '      <li class="c-total"><b>'
    yield escape((undefined(name='total') if l_0_total is missing else l_0_total))
    yield '</b> finding'
    yield escape(('' if ((undefined(name='total') if l_0_total is missing else l_0_total) == 1) else 's'))
    yield ' in all</li>\n    </ul>\n'
    if (undefined(name='editor_note') if l_0_editor_note is missing else l_0_editor_note):
        pass
        yield '<p class="editor-note" id="editor-note">'
        yield escape((undefined(name='editor_note') if l_0_editor_note is missing else l_0_editor_note))
        yield '</p>'
    yield '  </div>\n  <dl class="meta">\n    <dt>Input</dt><dd class="mono" id="input-file" title="'
    yield escape((undefined(name='board_file') if l_0_board_file is missing else l_0_board_file))
    yield '">'
    yield escape((undefined(name='board_file') if l_0_board_file is missing else l_0_board_file))
    yield '</dd>\n    <dt>sha256</dt><dd class="mono sha" title="'
    yield escape(((undefined(name='sha256') if l_0_sha256 is missing else l_0_sha256) or ''))
    yield '">'
    yield escape(((undefined(name='sha256') if l_0_sha256 is missing else l_0_sha256) or '—'))
    yield '</dd>\n    <dt>Date</dt><dd>'
    yield escape(((undefined(name='date') if l_0_date is missing else l_0_date) or '—'))
    yield '</dd>\n    <dt>Tool</dt><dd>accel-drc '
    yield escape((undefined(name='tool_version') if l_0_tool_version is missing else l_0_tool_version))
    yield '</dd>\n'
    if (undefined(name='kicad_drc') if l_0_kicad_drc is missing else l_0_kicad_drc):
        pass
        yield '<dt>KiCad DRC</dt><dd>KiCad '
        yield escape(environment.getattr((undefined(name='kicad_drc') if l_0_kicad_drc is missing else l_0_kicad_drc), 'kicad_version'))
        yield ' (kicad-cli)</dd>'
    yield '    <dt>Rule packs</dt><dd class="packs" title="'
    yield escape((undefined(name='packs_text') if l_0_packs_text is missing else l_0_packs_text))
    yield '">'
    l_1_loop = missing
    t_12 = 1
    for l_1_p, l_1_loop in LoopContext((undefined(name='packs') if l_0_packs is missing else l_0_packs), undefined):
        _loop_vars = {}
        pass
        yield '<span class="pack">'
        yield escape(environment.getattr(l_1_p, 'name'))
        yield ' '
        yield escape(environment.getattr(l_1_p, 'version'))
        yield '</span>'
        if (not environment.getattr(l_1_loop, 'last')):
            pass
            yield ', '
        t_12 = 0
    l_1_loop = l_1_p = missing
    if t_12:
        pass
        yield '—'
    yield '</dd>\n  </dl>\n</header>\n\n<nav class="toc" aria-label="sections">\n  <a href="#findings">Findings</a>\n  <a href="#board">Board</a>\n'
    if (undefined(name='kicad_drc') if l_0_kicad_drc is missing else l_0_kicad_drc):
        pass
        yield '<a href="#kicad-drc">KiCad DRC</a>'
    yield '  <a href="#classification">Classification</a>\n  <a href="#stackup">Stack-up</a>\n'
    if (undefined(name='coverage') if l_0_coverage is missing else l_0_coverage):
        pass
        yield '<a href="#coverage">Coverage</a>'
    if (undefined(name='rails') if l_0_rails is missing else l_0_rails):
        pass
        yield '<a href="#pdn">PDN</a>'
    if (undefined(name='irdrop') if l_0_irdrop is missing else l_0_irdrop):
        pass
        yield '<a href="#irdrop">IR drop</a>'
    if (undefined(name='loss') if l_0_loss is missing else l_0_loss):
        pass
        yield '<a href="#loss">Insertion loss</a>'
    if (undefined(name='via_stubs') if l_0_via_stubs is missing else l_0_via_stubs):
        pass
        yield '<a href="#stubs">Via stubs</a>'
    yield '  <a href="#cannot-verify">Cannot verify</a>\n  <a href="#waivers">Waivers</a>\n  <a href="#rules">Rules</a>\n'
    if (undefined(name='references') if l_0_references is missing else l_0_references):
        pass
        yield '<a href="#references">References</a>'
    yield '</nav>\n\n<main>\n<section id="findings" class="card">\n  <h2>Findings <span class="muted" id="shown-count"></span></h2>\n  <form class="filters" id="filters" role="search" aria-label="filter the findings" onsubmit="return false">\n    <label>Severity <select id="f-sev"><option value="">all</option><option value="error">error</option><option value="warning">warning</option><option value="info">info</option></select></label>\n    <label>Status <select id="f-status"><option value="">all</option><option value="violation">violation</option><option value="cannot_verify">cannot verify</option><option value="waived">waived</option></select></label>\n    <label>Check <select id="f-check"><option value="">all</option>'
    for l_1_c in (undefined(name='checks') if l_0_checks is missing else l_0_checks):
        _loop_vars = {}
        pass
        yield '<option value="'
        yield escape(l_1_c)
        yield '">'
        yield escape(l_1_c)
        yield '</option>'
    l_1_c = missing
    yield '</select></label>\n    <label>Layer <select id="f-layer"><option value="">all</option>'
    for l_1_l in (undefined(name='finding_layers') if l_0_finding_layers is missing else l_0_finding_layers):
        _loop_vars = {}
        pass
        yield '<option value="'
        yield escape(l_1_l)
        yield '">'
        yield escape(l_1_l)
        yield '</option>'
    l_1_l = missing
    yield '</select></label>\n    <label>Net <input type="search" id="f-net" placeholder="contains…" autocomplete="off"></label>\n    <label>Text <input type="search" id="f-text" placeholder="message, rule, item…" autocomplete="off"></label>\n    <label class="chk"><input type="checkbox" id="f-group"> Group by rule</label>\n    <button type="button" id="f-clear">Clear filters</button>\n  </form>\n  <div class="table-wrap" id="table-wrap">\n    <table class="data findings" id="findings-table" role="table" aria-describedby="shown-count">\n      <caption class="sr-only">Findings; use the arrow keys to move between rows and Enter to show a finding on the board</caption>\n      <thead role="rowgroup"><tr role="row">\n        <th scope="col" role="columnheader" aria-sort="none"><button type="button" data-sort="severity">Severity</button></th>\n        <th scope="col" role="columnheader" aria-sort="none"><button type="button" data-sort="status">Status</button></th>\n        <th scope="col" role="columnheader" aria-sort="none"><button type="button" data-sort="rule">Rule</button></th>\n        <th scope="col" role="columnheader" aria-sort="none"><button type="button" data-sort="net">Net</button></th>\n        <th scope="col" role="columnheader" aria-sort="none"><button type="button" data-sort="layer">Layer</button></th>\n        <th scope="col" role="columnheader" aria-sort="none" class="num"><button type="button" data-sort="measured">Measured</button></th>\n        <th scope="col" role="columnheader" aria-sort="none" class="num"><button type="button" data-sort="limit">Limit</button></th>\n        <th scope="col" role="columnheader">Finding, why and source</th>\n      </tr></thead>\n      <tbody id="findings-body" role="rowgroup"></tbody>\n    </table>\n    <p class="muted empty" id="no-findings" hidden>No finding matches.</p>\n  </div>\n  <noscript><p class="warn">The findings table and board markers need JavaScript; the data is in the JSON block of this file.</p></noscript>\n</section>\n\n<section id="board" class="card">\n  <h2>Board</h2>\n  <div class="board-tools" role="toolbar" aria-label="board view controls">\n    <fieldset class="layer-toggles">\n      <legend>Layers</legend>\n'
    for l_1_l in (undefined(name='layers') if l_0_layers is missing else l_0_layers):
        _loop_vars = {}
        pass
        yield '      <label class="lt"><input type="checkbox" data-layer="'
        yield escape(environment.getattr(l_1_l, 'index'))
        yield '" '
        yield escape(('checked' if environment.getattr(l_1_l, 'visible') else ''))
        yield '><span class="swatch" style="background: '
        yield escape(environment.getattr(l_1_l, 'colour'))
        yield '" aria-hidden="true"></span>'
        yield escape(environment.getattr(l_1_l, 'name'))
        if environment.getattr(l_1_l, 'user'):
            pass
            yield ' <span class="muted">'
            yield escape(environment.getattr(l_1_l, 'user'))
            yield '</span>'
        yield '</label>\n'
    l_1_l = missing
    yield '      <label class="lt"><input type="checkbox" data-layer="vias" checked><span class="swatch sw-via" aria-hidden="true"></span>vias</label>\n      <label class="lt"><input type="checkbox" data-layer="markers" checked><span class="swatch sw-mk" aria-hidden="true"></span>findings</label>\n'
    if (undefined(name='board_drawings') if l_0_board_drawings is missing else l_0_board_drawings):
        pass
        yield '<label class="lt"><input type="checkbox" data-layer="drawings" checked><span class="swatch sw-dr" aria-hidden="true"></span>drawings ('
        yield escape((undefined(name='board_drawings') if l_0_board_drawings is missing else l_0_board_drawings))
        yield ')</label>'
    for l_1_h in (undefined(name='heat_layers') if l_0_heat_layers is missing else l_0_heat_layers):
        _loop_vars = {}
        pass
        yield '<label class="lt"><input type="checkbox" data-layer="'
        yield escape(environment.getattr(l_1_h, 'id'))
        yield '">IR map '
        yield escape(environment.getattr(l_1_h, 'label'))
        yield '</label>'
    l_1_h = missing
    yield '    </fieldset>\n    <div class="zoom-buttons">\n      <button type="button" id="zoom-in" aria-label="zoom in">+</button>\n      <button type="button" id="zoom-out" aria-label="zoom out">−</button>\n      <button type="button" id="zoom-home">Whole board</button>\n    </div>\n  </div>\n  <div class="board-wrap">\n    <div class="board-view" id="board-view">'
    yield escape((undefined(name='board_svg') if l_0_board_svg is missing else l_0_board_svg))
    yield '</div>\n    <aside class="detail" id="detail" aria-live="polite">\n      <h3>Selected finding</h3>\n      <p class="muted">Click a marker on the board or a row in the table.</p>\n    </aside>\n  </div>\n  <p class="legend"><span class="lg lg-error" aria-hidden="true"></span> error (filled disc) <span class="lg lg-warning" aria-hidden="true"></span> warning (thick ring) <span class="lg lg-info" aria-hidden="true"></span> info (small disc) <span class="lg lg-cv" aria-hidden="true"></span> cannot verify (dashed ring) <span class="lg lg-waived" aria-hidden="true"></span> waived (thin ring). Drag to pan, wheel to zoom. Geometry is simplified to a '
    yield escape(('%g' % (undefined(name='grid_mm') if l_0_grid_mm is missing else l_0_grid_mm)))
    yield ' mm grid.</p>\n</section>\n\n'
    if (undefined(name='kicad_drc') if l_0_kicad_drc is missing else l_0_kicad_drc):
        pass
        yield '<section id="kicad-drc" class="card">\n  <h2>KiCad DRC</h2>\n  <p>KiCad '
        yield escape(environment.getattr((undefined(name='kicad_drc') if l_0_kicad_drc is missing else l_0_kicad_drc), 'kicad_version'))
        yield "'s own design-rule check (<code>"
        yield escape(environment.getattr((undefined(name='kicad_drc') if l_0_kicad_drc is missing else l_0_kicad_drc), 'command'))
        yield '</code>), in the same verdict: '
        yield escape(environment.getattr(environment.getattr((undefined(name='kicad_drc') if l_0_kicad_drc is missing else l_0_kicad_drc), 'counts'), 'violations'))
        yield ' violation'
        yield escape(('' if (environment.getattr(environment.getattr((undefined(name='kicad_drc') if l_0_kicad_drc is missing else l_0_kicad_drc), 'counts'), 'violations') == 1) else 's'))
        yield ', '
        yield escape(environment.getattr(environment.getattr((undefined(name='kicad_drc') if l_0_kicad_drc is missing else l_0_kicad_drc), 'counts'), 'unconnected_items'))
        yield ' unconnected item'
        yield escape(('' if (environment.getattr(environment.getattr((undefined(name='kicad_drc') if l_0_kicad_drc is missing else l_0_kicad_drc), 'counts'), 'unconnected_items') == 1) else 's'))
        yield ', '
        yield escape(environment.getattr(environment.getattr((undefined(name='kicad_drc') if l_0_kicad_drc is missing else l_0_kicad_drc), 'counts'), 'schematic_parity'))
        yield ' schematic parity; '
        yield escape(environment.getattr((undefined(name='kicad_drc') if l_0_kicad_drc is missing else l_0_kicad_drc), 'excluded'))
        yield ' excluded in KiCad'
        if environment.getattr((undefined(name='kicad_drc') if l_0_kicad_drc is missing else l_0_kicad_drc), 'stale'):
            pass
            yield ', '
            yield escape(environment.getattr((undefined(name='kicad_drc') if l_0_kicad_drc is missing else l_0_kicad_drc), 'stale'))
            yield ' stale exclusion'
            yield escape(('' if (environment.getattr((undefined(name='kicad_drc') if l_0_kicad_drc is missing else l_0_kicad_drc), 'stale') == 1) else 's'))
        yield '. They are on the board view and in the findings table (Check: <code>kicad_drc</code>).</p>\n'
        if environment.getattr((undefined(name='kicad_drc') if l_0_kicad_drc is missing else l_0_kicad_drc), 'types'):
            pass
            yield '  <table class="kicad-types">\n    <thead><tr><th scope="col">rule</th><th scope="col" class="num">errors</th><th scope="col" class="num">warnings</th><th scope="col" class="num">open</th><th scope="col" class="num">waived / excluded</th></tr></thead>\n    <tbody>'
            for (l_1_rid, l_1_c) in environment.getattr((undefined(name='kicad_drc') if l_0_kicad_drc is missing else l_0_kicad_drc), 'types'):
                _loop_vars = {}
                pass
                yield '<tr><th scope="row"><code>'
                yield escape(l_1_rid)
                yield '</code></th><td class="num">'
                yield escape(environment.getattr(l_1_c, 'error'))
                yield '</td><td class="num">'
                yield escape(environment.getattr(l_1_c, 'warning'))
                yield '</td><td class="num">'
                yield escape(environment.getattr(l_1_c, 'violation'))
                yield '</td><td class="num">'
                yield escape(environment.getattr(l_1_c, 'waived'))
                yield '</td></tr>'
            l_1_rid = l_1_c = missing
            yield '</tbody>\n  </table>\n'
            if environment.getattr((undefined(name='kicad_drc') if l_0_kicad_drc is missing else l_0_kicad_drc), 'capped'):
                pass
                yield '<p class="warn-note"><span aria-hidden="true">⚠</span> kicad-cli reported exactly 199 entries of '
                l_1_loop = missing
                for l_1_r, l_1_loop in LoopContext(environment.getattr((undefined(name='kicad_drc') if l_0_kicad_drc is missing else l_0_kicad_drc), 'capped'), undefined):
                    _loop_vars = {}
                    pass
                    yield '<code>'
                    yield escape(l_1_r)
                    yield '</code>'
                    if (not environment.getattr(l_1_loop, 'last')):
                        pass
                        yield ', '
                l_1_loop = l_1_r = missing
                yield ": KiCad's DRC stops reporting a type at 199, so there may be more.</p>"
        else:
            pass
            yield "<p>KiCad's DRC found nothing.</p>"
        yield '</section>\n'
    yield '\n'
    if (undefined(name='warnings') if l_0_warnings is missing else l_0_warnings):
        pass
        yield '<section class="card notes" aria-label="reader warnings">\n  <h2>Reader notes</h2>\n  <ul>'
        for l_1_w in (undefined(name='warnings') if l_0_warnings is missing else l_0_warnings):
            _loop_vars = {}
            pass
            yield '<li>'
            yield escape(l_1_w)
            yield '</li>'
        l_1_w = missing
        yield '</ul>\n</section>\n'
    yield '\n<section id="classification" class="card">\n  <h2>Classification</h2>\n  <p>'
    if (undefined(name='overridden') if l_0_overridden is missing else l_0_overridden):
        pass
        yield 'The class <strong>'
        yield escape(environment.getattr((undefined(name='cls') if l_0_cls is missing else l_0_cls), 'board_class'))
        yield '</strong> was set by the '
        yield escape(('command line (--class)' if (environment.getattr((undefined(name='cls') if l_0_cls is missing else l_0_cls), 'source') == 'cli') else 'project config (class: in accel-drc.yaml)'))
        yield '; on its own the classifier said '
        if ((undefined(name='auto_class') if l_0_auto_class is missing else l_0_auto_class) == 'general'):
            pass
            yield 'it is <strong>not an accelerator board</strong>'
        else:
            pass
            yield '<strong>'
            yield escape((undefined(name='auto_class') if l_0_auto_class is missing else l_0_auto_class))
            yield '</strong> with confidence '
            yield escape(('%.2f' % (undefined(name='auto_conf') if l_0_auto_conf is missing else l_0_auto_conf)))
        yield '.'
    elif (not t_10((undefined(name='not_accelerator') if l_0_not_accelerator is missing else l_0_not_accelerator))):
        pass
        yield 'The board is <strong>not an accelerator board</strong> (class <strong>'
        yield escape(environment.getattr((undefined(name='cls') if l_0_cls is missing else l_0_cls), 'board_class'))
        yield '</strong>)'
        if (undefined(name='not_accelerator') if l_0_not_accelerator is missing else l_0_not_accelerator):
            pass
            yield ': '
            yield escape((undefined(name='not_accelerator') if l_0_not_accelerator is missing else l_0_not_accelerator))
        yield '. The class-specific rules (layer count, Tg, copper weight, PDN target, fab class) did not run; declare <code>class:</code> in accel-drc.yaml or <code>--class</code> to apply them.'
    else:
        pass
        yield 'The board was classified as <strong>'
        yield escape(environment.getattr((undefined(name='cls') if l_0_cls is missing else l_0_cls), 'board_class'))
        yield '</strong> with confidence '
        yield escape(('%.2f' % environment.getattr((undefined(name='cls') if l_0_cls is missing else l_0_cls), 'confidence')))
        yield '.'
    yield '&#32;\n'
    if (undefined(name='scores') if l_0_scores is missing else l_0_scores):
        pass
        yield 'Scores: '
        l_1_loop = missing
        for (l_1_k, l_1_v), l_1_loop in LoopContext((undefined(name='scores') if l_0_scores is missing else l_0_scores), undefined):
            _loop_vars = {}
            pass
            yield '<span class="score">'
            yield escape(l_1_k)
            yield ' '
            yield escape(('%.2f' % l_1_v))
            yield '</span>'
            if (not environment.getattr(l_1_loop, 'last')):
                pass
                yield ' · '
        l_1_loop = l_1_k = l_1_v = missing
        yield '.'
    yield '</p>\n  <div class="board-facts">\n    <span>'
    yield escape(environment.getattr((undefined(name='board') if l_0_board is missing else l_0_board), 'layers'))
    yield ' copper layers</span>\n'
    if environment.getattr((undefined(name='board') if l_0_board is missing else l_0_board), 'size'):
        pass
        yield '<span>'
        yield escape(('%.1f' % environment.getitem(environment.getattr((undefined(name='board') if l_0_board is missing else l_0_board), 'size'), 0)))
        yield ' × '
        yield escape(('%.1f' % environment.getitem(environment.getattr((undefined(name='board') if l_0_board is missing else l_0_board), 'size'), 1)))
        yield ' mm</span>'
    if environment.getattr((undefined(name='board') if l_0_board is missing else l_0_board), 'thickness'):
        pass
        yield '<span>'
        yield escape(('%.3f' % environment.getattr((undefined(name='board') if l_0_board is missing else l_0_board), 'thickness')))
        yield ' mm thick</span>'
    yield '    <span>'
    yield escape(environment.getattr((undefined(name='board') if l_0_board is missing else l_0_board), 'nets'))
    yield ' nets</span><span>'
    yield escape(environment.getattr((undefined(name='board') if l_0_board is missing else l_0_board), 'tracks'))
    yield ' track segments</span><span>'
    yield escape(environment.getattr((undefined(name='board') if l_0_board is missing else l_0_board), 'vias'))
    yield ' vias</span><span>'
    yield escape(environment.getattr((undefined(name='board') if l_0_board is missing else l_0_board), 'footprints'))
    yield ' footprints</span><span>'
    yield escape(environment.getattr((undefined(name='board') if l_0_board is missing else l_0_board), 'zones'))
    yield ' zones</span>\n  </div>\n'
    if (undefined(name='signal_nets') if l_0_signal_nets is missing else l_0_signal_nets):
        pass
        yield '<p class="signal-nets">Signal types recognised: '
        for (l_1_sig, l_1_n) in (undefined(name='signal_nets') if l_0_signal_nets is missing else l_0_signal_nets):
            _loop_vars = {}
            pass
            yield '<span class="chip">'
            yield escape(l_1_sig)
            yield ': '
            yield escape(l_1_n)
            yield ' net'
            yield escape(('' if (l_1_n == 1) else 's'))
            yield '</span>'
        l_1_sig = l_1_n = missing
        yield '</p>'
    if (undefined(name='evidence') if l_0_evidence is missing else l_0_evidence):
        pass
        yield '  <table class="data evidence">\n    <caption>Evidence and how it weighed (positive weight votes for a class, negative against it)</caption>\n    <thead><tr><th scope="col">Evidence</th><th scope="col">On this board</th>'
        for l_1_c in (undefined(name='classes') if l_0_classes is missing else l_0_classes):
            _loop_vars = {}
            pass
            yield '<th scope="col" class="num">'
            yield escape(l_1_c)
            yield '</th>'
        l_1_c = missing
        yield '<th scope="col">Note</th><th scope="col">Source</th></tr></thead>\n    <tbody>\n'
        for l_1_e in (undefined(name='evidence') if l_0_evidence is missing else l_0_evidence):
            l_1_dict = resolve('dict')
            l_1_cite = resolve('cite')
            l_1_votes = missing
            _loop_vars = {}
            pass
            l_1_votes = context.call((undefined(name='dict') if l_1_dict is missing else l_1_dict), environment.getattr(l_1_e, 'votes'), _loop_vars=_loop_vars)
            _loop_vars['votes'] = l_1_votes
            yield '      <tr><th scope="row">'
            yield escape(environment.getattr(l_1_e, 'what'))
            yield '</th><td>'
            yield escape(environment.getattr(l_1_e, 'value'))
            yield '</td>\n'
            for l_2_c in (undefined(name='classes') if l_0_classes is missing else l_0_classes):
                l_2_v = missing
                _loop_vars = {}
                pass
                l_2_v = context.call(environment.getattr((undefined(name='votes') if l_1_votes is missing else l_1_votes), 'get'), l_2_c, _loop_vars=_loop_vars)
                _loop_vars['v'] = l_2_v
                yield '<td class="num vote '
                yield escape(('pos' if ((undefined(name='v') if l_2_v is missing else l_2_v) and ((undefined(name='v') if l_2_v is missing else l_2_v) > 0)) else ('neg' if ((undefined(name='v') if l_2_v is missing else l_2_v) and ((undefined(name='v') if l_2_v is missing else l_2_v) < 0)) else '')))
                yield '">'
                if (undefined(name='v') if l_2_v is missing else l_2_v):
                    pass
                    yield escape(('+' if ((undefined(name='v') if l_2_v is missing else l_2_v) > 0) else '−'))
                    yield escape(('%.2f' % t_1((undefined(name='v') if l_2_v is missing else l_2_v))))
                else:
                    pass
                    yield '·'
                yield '</td>'
            l_2_c = l_2_v = missing
            yield '      <td>'
            yield escape(environment.getattr(l_1_e, 'note'))
            yield '</td><td class="src">'
            yield escape(context.call((undefined(name='cite') if l_1_cite is missing else l_1_cite), environment.getattr(l_1_e, 'source'), _loop_vars=_loop_vars))
            yield '</td></tr>\n'
        l_1_e = l_1_dict = l_1_votes = l_1_cite = missing
        yield '    </tbody>\n  </table>\n'
    else:
        pass
        yield '<p class="muted">The classifier recorded no evidence.</p>'
    yield '</section>\n\n<section id="stackup" class="card">\n  <h2>Stack-up</h2>\n'
    if (undefined(name='stackup') if l_0_stackup is missing else l_0_stackup):
        pass
        yield '  <div class="stackup-wrap">\n    <figure class="stackup-fig">'
        yield escape((undefined(name='stackup_svg') if l_0_stackup_svg is missing else l_0_stackup_svg))
        yield '<figcaption>Drawn to scale. <span class="key k-err">hatched ✖</span> error or warning, <span class="key k-cv">dotted ?</span> cannot verify.</figcaption></figure>\n    <div class="stackup-table-wrap">\n    <table class="data stackup-table">\n      <caption>Layers top to bottom, with the findings against each</caption>\n      <thead><tr><th scope="col">Layer</th><th scope="col">Findings</th><th scope="col">Kind</th><th scope="col" class="num">Thickness (mm)</th><th scope="col">Material</th><th scope="col" class="num">Dk</th><th scope="col" class="num">Df</th><th scope="col" class="num">Tg (°C)</th><th scope="col">Foil</th><th scope="col" class="num">Cu (oz)</th><th scope="col">Signals</th></tr></thead>\n      <tbody>\n'
        for l_1_r in (undefined(name='stackup') if l_0_stackup is missing else l_0_stackup):
            _loop_vars = {}
            pass
            yield '        <tr class="s-'
            yield escape(environment.getattr(l_1_r, 'state'))
            yield ' k-'
            yield escape(environment.getattr(l_1_r, 'kind'))
            yield '">\n          <th scope="row">'
            yield escape(environment.getattr(l_1_r, 'name'))
            if environment.getattr(l_1_r, 'user_name'):
                pass
                yield ' <span class="muted">('
                yield escape(environment.getattr(l_1_r, 'user_name'))
                yield ')</span>'
            yield '</th>\n          <td class="state">'
            if (environment.getattr(l_1_r, 'state') == 'ok'):
                pass
                yield '<span class="ok-txt">✔ none</span>'
            else:
                pass
                yield '<a class="layer-findings" href="#findings" data-filter-layer="'
                yield escape(environment.getattr(l_1_r, 'name'))
                yield '" title="show the findings against '
                yield escape(environment.getattr(l_1_r, 'name'))
                yield '">'
                for (l_2_k, l_2_v) in t_2(environment.getattr(l_1_r, 'counts')):
                    _loop_vars = {}
                    pass
                    yield '<span class="badge b-'
                    yield escape(l_2_k)
                    yield '">'
                    yield escape(context.call(environment.getattr({'error': '✖', 'warning': '⚠', 'info': 'ℹ', 'cannot_verify': '?', 'waived': '⊘'}, 'get'), l_2_k, '', _loop_vars=_loop_vars))
                    yield ' '
                    yield escape(l_2_v)
                    yield ' '
                    yield escape(t_7(context.eval_ctx, l_2_k, '_', ' '))
                    yield '</span> '
                l_2_k = l_2_v = missing
                yield '</a>'
            yield '</td>\n          <td>'
            yield escape(environment.getattr(l_1_r, 'kind'))
            yield '</td>\n          <td class="num">'
            yield escape(t_6(environment.getattr(l_1_r, 'thickness_mm')))
            yield '</td>\n          <td class="mat">'
            yield escape((environment.getattr(l_1_r, 'material') or '—'))
            if (environment.getattr(l_1_r, 'library_material') and (environment.getattr(l_1_r, 'library_material') != environment.getattr(l_1_r, 'material'))):
                pass
                yield ' <span class="muted">→ '
                yield escape(environment.getattr(l_1_r, 'library_material'))
                yield '</span>'
            yield '</td>\n          <td class="num">'
            yield escape(t_6(environment.getattr(l_1_r, 'epsilon_r')))
            yield '</td>\n          <td class="num">'
            yield escape(t_6(environment.getattr(l_1_r, 'loss_tangent')))
            yield '</td>\n          <td class="num">'
            yield escape(t_6(environment.getattr(l_1_r, 'tg_c')))
            yield '</td>\n          <td>'
            yield escape((environment.getattr(l_1_r, 'foil') or ('—' if (environment.getattr(l_1_r, 'kind') != 'copper') else 'undeclared')))
            yield '</td>\n          <td class="num">'
            yield escape(t_6(environment.getattr(l_1_r, 'copper_oz')))
            yield '</td>\n          <td>'
            for l_2_s in environment.getattr(l_1_r, 'signals'):
                _loop_vars = {}
                pass
                yield '<span class="chip">'
                yield escape(l_2_s)
                yield '</span>'
            l_2_s = missing
            yield '</td>\n        </tr>\n'
        l_1_r = missing
        yield '      </tbody>\n    </table>\n    </div>\n  </div>\n'
    else:
        pass
        yield '  <p class="muted">The board declares no stack-up: every stack-up rule is <em>cannot verify</em>.</p>\n'
    yield '</section>\n\n'
    if (undefined(name='coverage') if l_0_coverage is missing else l_0_coverage):
        pass
        yield '<section id="coverage" class="card">\n  <h2>Coverage <span class="muted">— what high-speed copper was examined</span></h2>\n  <p><strong>'
        yield escape(environment.getattr(environment.getattr((undefined(name='coverage') if l_0_coverage is missing else l_0_coverage), 'summary'), 'line'))
        yield '</strong></p>\n  <p class="muted">Every differential pair and every net of a recognised high-speed type, its interface and how it is known (<em>declared</em>: in <code>accel-drc.yaml</code> or by the board\'s own net class, net name, connector pin or AC coupling; <em>assumed</em>: only the family is known and the rate was guessed; or unknown) and the rules that examined it. A pair no interface rule examined has passed nothing: it was not checked.</p>\n'
        if environment.getattr((undefined(name='coverage') if l_0_coverage is missing else l_0_coverage), 'rows'):
            pass
            yield '  <div class="table-wrap"><table class="data coverage">\n    <thead><tr><th scope="col">Pair / net</th><th scope="col">Interface</th><th scope="col">Basis</th><th scope="col">Rules that examined it</th><th scope="col">Not checked because</th></tr></thead>\n    <tbody>\n'
            for l_1_r in environment.getattr((undefined(name='coverage') if l_0_coverage is missing else l_0_coverage), 'rows'):
                _loop_vars = {}
                pass
                yield '      <tr class="cov-'
                yield escape(('ok' if environment.getattr(l_1_r, 'checked') else 'none'))
                yield '"><th scope="row" title="'
                yield escape(environment.getattr(l_1_r, 'nets'))
                yield '">'
                yield escape(environment.getattr(l_1_r, 'name'))
                if (environment.getattr(l_1_r, 'kind') == 'net'):
                    pass
                    yield ' <span class="muted">(single-ended)</span>'
                yield '</th>\n      <td>'
                yield escape(environment.getattr(l_1_r, 'interface'))
                if environment.getattr(l_1_r, 'evidence'):
                    pass
                    yield '<div class="muted">'
                    yield escape(environment.getattr(l_1_r, 'evidence'))
                    yield '</div>'
                yield '</td>\n      <td><span class="badge b-basis-'
                yield escape(environment.getattr(l_1_r, 'basis'))
                yield '">'
                yield escape(environment.getattr(l_1_r, 'basis'))
                yield '</span></td>\n      <td>'
                t_13 = 1
                for (l_2_rid, l_2_cls_, l_2_res) in environment.getattr(l_1_r, 'runs'):
                    _loop_vars = {}
                    pass
                    yield '<span class="badge b-o-'
                    yield escape(l_2_cls_)
                    yield '" title="'
                    yield escape(l_2_res)
                    yield '">'
                    yield escape(l_2_rid)
                    yield '</span> '
                    t_13 = 0
                l_2_rid = l_2_cls_ = l_2_res = missing
                if t_13:
                    pass
                    yield '<span class="muted">none</span>'
                yield '</td>\n      <td>'
                yield escape((environment.getattr(l_1_r, 'why') or '—'))
                yield '</td></tr>\n'
            l_1_r = missing
            yield '    </tbody>\n  </table></div>\n'
            if environment.getattr((undefined(name='coverage') if l_0_coverage is missing else l_0_coverage), 'more'):
                pass
                yield '<p class="muted">… and '
                yield escape(environment.getattr((undefined(name='coverage') if l_0_coverage is missing else l_0_coverage), 'more'))
                yield ' more rows in the JSON report (<code>coverage.pairs</code>).</p>'
        yield '</section>\n'
    yield '\n'
    if (undefined(name='rails') if l_0_rails is missing else l_0_rails):
        pass
        yield '<section id="pdn" class="card">\n  <h2>PDN impedance</h2>\n  <p>|Z(f)| of each rail against its target; the shaded band is the frequency range the rule checks, the cross marks the worst point in it (▲ when over the target). The dashed line is where a board-level lumped model (VRM, capacitors and planes at one node) stops meaning much: above it the package capacitors, the die capacitance and the plane spreading inductance to the balls set |Z| (board decoupling is designed for roughly 100 kHz to 10–20 MHz: AMD UG583/UG584). Only the core rail (declared <code>role: core</code>, or recognised) is held to the class target; another rail needs its own voltage, ripple and load step.</p>\n  <div class="plots">\n'
        for l_1_r in (undefined(name='rails') if l_0_rails is missing else l_0_rails):
            _loop_vars = {}
            pass
            yield '    <figure class="plot-fig">\n      <figcaption><strong>'
            yield escape(environment.getattr(l_1_r, 'name'))
            yield '</strong> · target '
            yield escape(environment.getattr(l_1_r, 'target'))
            yield ' · plane capacitance '
            yield escape(environment.getattr(l_1_r, 'plane_c'))
            yield ' · '
            yield escape(environment.getattr(l_1_r, 'decaps'))
            yield ' decoupling capacitor'
            yield escape(('' if (environment.getattr(l_1_r, 'decaps') == 1) else 's'))
            if environment.getattr(l_1_r, 'nets'):
                pass
                yield ' · nets '
                yield escape(t_4(context.eval_ctx, environment.getattr(l_1_r, 'nets'), ', '))
            if environment.getattr(l_1_r, 'dominant'):
                pass
                yield ' · dominant: '
                yield escape(environment.getattr(l_1_r, 'dominant'))
            if environment.getattr(l_1_r, 'target_source'):
                pass
                yield ' · target from '
                yield escape(environment.getattr(l_1_r, 'target_source'))
            if environment.getattr(l_1_r, 'role'):
                pass
                yield ' · role '
                yield escape(environment.getattr(l_1_r, 'role'))
                yield ' ('
                yield escape(environment.getattr(l_1_r, 'role_basis'))
                yield ')'
            if environment.getattr(l_1_r, 'role_evidence'):
                pass
                yield '<div class="muted">core rail recognised: it '
                yield escape(environment.getattr(l_1_r, 'role_evidence'))
                yield '</div>'
            if environment.getattr(l_1_r, 'need_load'):
                pass
                yield '<div class="muted">no target: declare '
                yield escape(t_4(context.eval_ctx, environment.getattr(l_1_r, 'need_load'), '; '))
                yield '</div>'
            if environment.getattr(l_1_r, 'model_band'):
                pass
                yield '<div class="muted">'
                yield escape(environment.getattr(l_1_r, 'model_band'))
                yield '</div>'
            if environment.getattr(l_1_r, 'missing'):
                pass
                yield '<div class="muted">missing: '
                yield escape(t_4(context.eval_ctx, environment.getattr(l_1_r, 'missing'), '; '))
                yield '</div>'
            yield '</figcaption>\n      '
            yield escape(environment.getattr(l_1_r, 'plot'))
            yield '\n    </figure>\n'
        l_1_r = missing
        yield '  </div>\n</section>\n'
    yield '\n'
    if (undefined(name='irdrop') if l_0_irdrop is missing else l_0_irdrop):
        pass
        yield '<section id="irdrop" class="card">\n  <h2>DC IR drop</h2>\n  <p>DC conduction solve on each declared rail\'s copper (zone fills, tracks, pads, plated barrels): sources held at the rail voltage, each load drawing its current evenly from its pads. Per copper layer, the voltage (blue = lowest) and the current density (red = highest); the worst spots are findings with positions. DC only, no thermal coupling.</p>\n'
        for l_1_r in (undefined(name='irdrop') if l_0_irdrop is missing else l_0_irdrop):
            _loop_vars = {}
            pass
            yield '  <h3>'
            yield escape(environment.getattr(l_1_r, 'rail'))
            yield ' · '
            yield escape(environment.getattr(l_1_r, 'voltage'))
            yield ' V'
            if (not t_10(environment.getattr(l_1_r, 'worst_drop_mv'))):
                pass
                yield ' · worst drop '
                yield escape(t_6(environment.getattr(l_1_r, 'worst_drop_mv')))
                yield ' mV ('
                yield escape(t_6(environment.getattr(l_1_r, 'worst_drop_pct')))
                yield ' %)'
            if environment.getattr(l_1_r, 'resistance_ohm'):
                pass
                yield ' · '
                yield escape(t_6((environment.getattr(l_1_r, 'resistance_ohm') * 1000000.0)))
                yield ' µΩ'
            yield '</h3>\n'
            if environment.getattr(l_1_r, 'missing'):
                pass
                yield '<p class="muted">declare: '
                yield escape(t_4(context.eval_ctx, environment.getattr(l_1_r, 'missing'), '; '))
                yield '</p>'
            if environment.getattr(l_1_r, 'declare_entry'):
                pass
                yield '<pre class="declare">'
                yield escape(environment.getattr(l_1_r, 'declare_entry'))
                yield '</pre>'
            if environment.getattr(l_1_r, 'error'):
                pass
                yield '<p class="muted">'
                yield escape(environment.getattr(l_1_r, 'error'))
                yield '</p>'
            if environment.getattr(l_1_r, 'loads'):
                pass
                yield '<table class="data"><caption>Loads</caption><tr><th>load</th><th>A</th><th>V min</th><th>drop mV</th><th>drop %</th></tr>\n'
                for l_2_l in environment.getattr(l_1_r, 'loads'):
                    _loop_vars = {}
                    pass
                    yield '<tr><td>'
                    yield escape(environment.getattr(l_2_l, 'ref'))
                    yield '</td><td>'
                    yield escape(t_6(environment.getattr(l_2_l, 'current_a')))
                    yield '</td><td>'
                    yield escape(t_6(environment.getattr(l_2_l, 'v_min')))
                    yield '</td><td>'
                    yield escape(t_6(environment.getattr(l_2_l, 'drop_mv')))
                    yield '</td><td>'
                    yield escape(t_6(environment.getattr(l_2_l, 'drop_pct')))
                    yield '</td></tr>'
                l_2_l = missing
                yield '</table>\n  <p class="muted">mesh: '
                yield escape(environment.getattr(environment.getattr(l_1_r, 'mesh'), 'cell_mm'))
                yield ' mm cells, '
                yield escape(environment.getattr(environment.getattr(l_1_r, 'mesh'), 'unknowns'))
                yield ' unknowns'
                if t_9(environment.getattr(environment.getattr(l_1_r, 'mesh'), 'change_pct')):
                    pass
                    yield '; a grid twice as coarse moves the drop '
                    yield escape(environment.getattr(environment.getattr(l_1_r, 'mesh'), 'change_pct'))
                    yield ' %'
                if environment.getattr(l_1_r, 'max_via_current_a'):
                    pass
                    yield '; largest via current '
                    yield escape(t_6(environment.getattr(l_1_r, 'max_via_current_a')))
                    yield ' A'
                yield '</p>'
            yield '  <div class="plots">\n'
            for l_2_m in (environment.getattr(l_1_r, 'maps') or []):
                _loop_vars = {}
                pass
                yield '    <figure class="plot-fig"><figcaption><strong>'
                yield escape(environment.getattr(l_2_m, 'layer'))
                yield '</strong> voltage '
                yield escape(t_6(environment.getitem(environment.getattr(l_2_m, 'voltage_range_v'), 0)))
                yield '–'
                yield escape(t_6(environment.getitem(environment.getattr(l_2_m, 'voltage_range_v'), 1)))
                yield ' V</figcaption><img alt="voltage on '
                yield escape(environment.getattr(l_2_m, 'layer'))
                yield '" src="'
                yield escape(environment.getattr(l_2_m, 'voltage_png'))
                yield '" style="width:100%;image-rendering:pixelated"></figure>\n    <figure class="plot-fig"><figcaption><strong>'
                yield escape(environment.getattr(l_2_m, 'layer'))
                yield '</strong> current density 0–'
                yield escape(t_6(environment.getattr(l_2_m, 'current_density_max_a_per_mm2')))
                yield ' A/mm²</figcaption><img alt="current density on '
                yield escape(environment.getattr(l_2_m, 'layer'))
                yield '" src="'
                yield escape(environment.getattr(l_2_m, 'current_density_png'))
                yield '" style="width:100%;image-rendering:pixelated"></figure>\n'
            l_2_m = missing
            yield '  </div>\n'
        l_1_r = missing
        yield '</section>\n'
    yield '\n'
    if (undefined(name='loss') if l_0_loss is missing else l_0_loss):
        pass
        yield '<section id="loss" class="card">\n  <h2>Insertion loss</h2>\n  <p>Loss of each channel at its Nyquist frequency (traces\' dielectric and conductor loss, via stubs, declared extras) against this board\'s budget; '
        yield escape(environment.getattr((undefined(name='loss') if l_0_loss is missing else l_0_loss), 'count'))
        yield ' channel'
        yield escape(('' if (environment.getattr((undefined(name='loss') if l_0_loss is missing else l_0_loss), 'count') == 1) else 's'))
        yield ', worst first. Below: S21 from 0 to 2× Nyquist of the worst channels (a via stub resonating in the band shows as a notch). Model and limits: docs/loss.md.</p>\n  <div class="plots">\n    <figure class="plot-fig">'
        yield escape(environment.getattr((undefined(name='loss') if l_0_loss is missing else l_0_loss), 'bars'))
        yield '</figure>\n'
        for l_1_c in environment.getattr((undefined(name='loss') if l_0_loss is missing else l_0_loss), 'curves'):
            _loop_vars = {}
            pass
            yield '    <figure class="plot-fig">\n      <figcaption><strong>'
            yield escape(environment.getattr(l_1_c, 'name'))
            yield '</strong> · '
            yield escape(t_3('%.1f', environment.getattr(l_1_c, 'total')))
            yield ' dB at Nyquist</figcaption>\n      '
            yield escape(environment.getattr(l_1_c, 'plot'))
            yield '\n    </figure>\n'
        l_1_c = missing
        yield '  </div>\n</section>\n'
    yield '\n'
    if (undefined(name='via_stubs') if l_0_via_stubs is missing else l_0_via_stubs):
        pass
        yield '<section id="stubs" class="card">\n  <h2>Via stubs</h2>\n  <p>Stub lengths per signal type; bars over the limit are hatched.</p>\n  <div class="plots">\n'
        for l_1_s in (undefined(name='via_stubs') if l_0_via_stubs is missing else l_0_via_stubs):
            _loop_vars = {}
            pass
            yield '    <figure class="plot-fig">\n      <figcaption><strong>'
            yield escape(environment.getattr(l_1_s, 'signal'))
            yield '</strong> · '
            yield escape(environment.getattr(l_1_s, 'count'))
            yield ' vias · longest '
            yield escape(t_6(environment.getattr(l_1_s, 'max')))
            yield ' mm · limit '
            yield escape(t_6(environment.getattr(l_1_s, 'limit')))
            yield ' mm · '
            if environment.getattr(l_1_s, 'over'):
                pass
                yield '<span class="badge b-error">✖ '
                yield escape(environment.getattr(l_1_s, 'over'))
                yield ' over</span>'
            else:
                pass
                yield '<span class="ok-txt">✔ none over</span>'
            if environment.getattr(l_1_s, 'notes'):
                pass
                yield ' · '
                yield escape(t_4(context.eval_ctx, environment.getattr(l_1_s, 'notes'), ' · '))
            yield '</figcaption>\n      '
            yield escape(environment.getattr(l_1_s, 'plot'))
            yield '\n    </figure>\n'
        l_1_s = missing
        yield '  </div>\n</section>\n'
    yield '\n<section id="cannot-verify" class="card">\n  <h2>Cannot verify <span class="muted">('
    yield escape(environment.getattr((undefined(name='status_counts') if l_0_status_counts is missing else l_0_status_counts), 'cannot_verify'))
    yield ')</span></h2>\n'
    if (undefined(name='cannot_verify') if l_0_cannot_verify is missing else l_0_cannot_verify):
        pass
        yield '  <p>These rules could not be checked because the board does not declare what they need. Unknown is never a pass: declare the missing data (usually in <code>accel-drc.yaml</code> beside the board) and run again.</p>\n'
        l_1_loop = missing
        for l_1_g, l_1_loop in LoopContext((undefined(name='cannot_verify') if l_0_cannot_verify is missing else l_0_cannot_verify), undefined):
            _loop_vars = {}
            pass
            yield '  <details class="cv-group" '
            yield escape(('open' if (environment.getattr(l_1_loop, 'index') <= 3) else ''))
            yield '>\n    <summary><span class="badge b-cannot_verify">? '
            yield escape(environment.getattr(l_1_g, 'count'))
            yield '</span> <strong>'
            yield escape(environment.getattr(l_1_g, 'declare'))
            yield '</strong></summary>\n    <p class="muted">Rules: '
            l_2_loop = missing
            for (l_2_rid, l_2_n), l_2_loop in LoopContext(environment.getattr(l_1_g, 'rules'), undefined):
                _loop_vars = {}
                pass
                yield '<code>'
                yield escape(l_2_rid)
                yield '</code> ('
                yield escape(l_2_n)
                yield ')'
                if (not environment.getattr(l_2_loop, 'last')):
                    pass
                    yield ', '
            l_2_loop = l_2_rid = l_2_n = missing
            yield '</p>\n'
            if environment.getattr(l_1_g, 'yaml'):
                pass
                yield '    <div class="declare-yaml">\n      <p class="declare-head">Paste into <code>accel-drc.yaml</code> beside the board, fill the <code>&lt;placeholders&gt;</code> and run again: it resolves the <strong class="declare-count">'
                yield escape(environment.getattr(l_1_g, 'count'))
                yield '</strong> finding'
                yield escape(('' if (environment.getattr(l_1_g, 'count') == 1) else 's'))
                yield ' of this group. <button type="button" class="copy-yaml" aria-label="Copy the accel-drc.yaml block for '
                yield escape(environment.getattr(l_1_g, 'declare'))
                yield '">Copy</button> <span class="copy-state" role="status" aria-live="polite"></span></p>\n      <pre class="yaml" tabindex="0">'
                yield escape(environment.getattr(l_1_g, 'yaml'))
                yield '</pre>\n    </div>\n'
            yield '    <ul>'
            for l_2_it in environment.getitem(l_1_g, 'items'):
                _loop_vars = {}
                pass
                yield '<li><a href="#findings" data-goto="'
                yield escape(environment.getattr(l_2_it, 'i'))
                yield '">'
                yield escape(environment.getattr(l_2_it, 'message'))
                yield '</a>'
                if environment.getattr(l_2_it, 'layer'):
                    pass
                    yield ' <span class="muted">· '
                    yield escape(environment.getattr(l_2_it, 'layer'))
                    yield '</span>'
                if environment.getattr(l_2_it, 'net'):
                    pass
                    yield ' <span class="muted">· '
                    yield escape(environment.getattr(l_2_it, 'net'))
                    yield '</span>'
                yield '</li>'
            l_2_it = missing
            if (environment.getattr(l_1_g, 'count') > t_5(environment.getitem(l_1_g, 'items'))):
                pass
                yield '<li class="muted">… and '
                yield escape((environment.getattr(l_1_g, 'count') - t_5(environment.getitem(l_1_g, 'items'))))
                yield ' more (filter the table by status “cannot verify”)</li>'
            yield '</ul>\n  </details>\n'
        l_1_loop = l_1_g = missing
    else:
        pass
        yield '  <p class="ok-txt">✔ Every rule that ran had the data it needed.</p>\n'
    yield '</section>\n\n<section id="waivers" class="card">\n  <h2>Waivers</h2>\n'
    l_0_nw = ((t_5(environment.getattr((undefined(name='waivers') if l_0_waivers is missing else l_0_waivers), 'applied')) + t_5(environment.getattr((undefined(name='waivers') if l_0_waivers is missing else l_0_waivers), 'expired'))) + t_5(environment.getattr((undefined(name='waivers') if l_0_waivers is missing else l_0_waivers), 'stale')))
    context.vars['nw'] = l_0_nw
    context.exported_vars.add('nw')
    if (undefined(name='nw') if l_0_nw is missing else l_0_nw):
        pass
        yield '  <table class="data waivers">\n    <caption>Waivers from the project config: applied (matched a finding), expired (past their date, so not applied) and stale (matched nothing)</caption>\n    <thead><tr><th scope="col">State</th><th scope="col">Rule</th><th scope="col">Selector</th><th scope="col">Reason</th><th scope="col">Owner</th><th scope="col">Expires</th><th scope="col" class="num">Matched</th></tr></thead>\n    <tbody>\n'
        for l_1_state in ['applied', 'expired', 'stale']:
            _loop_vars = {}
            pass
            for l_2_w in environment.getitem((undefined(name='waivers') if l_0_waivers is missing else l_0_waivers), l_1_state):
                _loop_vars = {}
                pass
                yield '      <tr class="w-'
                yield escape(l_1_state)
                yield '"><td><span class="badge b-w-'
                yield escape(l_1_state)
                yield '">'
                yield escape(environment.getitem({'applied': '⊘', 'expired': '⌛', 'stale': '∅'}, l_1_state))
                yield ' '
                yield escape(l_1_state)
                yield '</span></td><td><code>'
                yield escape((environment.getattr(l_2_w, 'rule') or '—'))
                yield '</code></td><td>'
                yield escape(environment.getattr(l_2_w, 'selector_text'))
                if environment.getattr(l_2_w, 'hint'):
                    pass
                    yield '<div class="muted">'
                    yield escape(environment.getattr(l_2_w, 'hint'))
                    yield '</div>'
                yield '</td><td>'
                yield escape((environment.getattr(l_2_w, 'reason') or '—'))
                yield '</td><td>'
                yield escape((environment.getattr(l_2_w, 'owner') or '—'))
                yield '</td><td>'
                yield escape((environment.getattr(l_2_w, 'expires') or '—'))
                yield '</td><td class="num">'
                yield escape((environment.getattr(l_2_w, 'matched') if (not t_10(environment.getattr(l_2_w, 'matched'))) else (environment.getattr(l_2_w, 'count') if (not t_10(environment.getattr(l_2_w, 'count'))) else '—')))
                yield '</td></tr>\n'
            l_2_w = missing
        l_1_state = missing
        yield '    </tbody>\n  </table>\n'
    else:
        pass
        yield '<p class="muted">No waivers are configured.</p>'
    if environment.getattr((undefined(name='waivers') if l_0_waivers is missing else l_0_waivers), 'kicad'):
        pass
        yield '  <table class="data kicad-exclusions" id="kicad-exclusions">\n    <caption>Excluded in KiCad: violations of KiCad\'s own DRC that the designer excluded in KiCad (Board Setup, or a marker\'s “Exclude”), stored in the project file; they are not waivers of the config</caption>\n    <thead><tr><th scope="col">State</th><th scope="col">KiCad rule</th><th scope="col">Where</th><th scope="col">Finding set aside</th><th scope="col">KiCad comment</th></tr></thead>\n    <tbody>\n'
        for l_1_w in environment.getattr((undefined(name='waivers') if l_0_waivers is missing else l_0_waivers), 'kicad'):
            _loop_vars = {}
            pass
            yield '      <tr class="w-'
            yield escape(('stale' if (environment.getattr(l_1_w, 'state') == 'stale') else 'applied'))
            yield '"><td><span class="badge b-w-'
            yield escape(('stale' if (environment.getattr(l_1_w, 'state') == 'stale') else 'applied'))
            yield '">'
            yield escape(('∅ stale' if (environment.getattr(l_1_w, 'state') == 'stale') else '⊘ excluded'))
            yield '</span></td><td><code>'
            yield escape((environment.getattr(l_1_w, 'rule') or '—'))
            yield '</code></td><td>'
            yield escape(environment.getattr(l_1_w, 'where'))
            yield '</td><td>'
            if environment.getattr(l_1_w, 'finding'):
                pass
                yield '<a href="#findings" data-goto="'
                yield escape(environment.getattr(environment.getattr(l_1_w, 'finding'), 'i'))
                yield '">'
                yield escape(environment.getattr(environment.getattr(l_1_w, 'finding'), 'message'))
                yield '</a>'
            else:
                pass
                yield '—'
            if environment.getattr(l_1_w, 'hint'):
                pass
                yield '<div class="muted">'
                yield escape(environment.getattr(l_1_w, 'hint'))
                yield '</div>'
            yield '</td><td>'
            yield escape((environment.getattr(l_1_w, 'comment') or '—'))
            yield '</td></tr>\n'
        l_1_w = missing
        yield '    </tbody>\n  </table>\n'
    yield '</section>\n\n<section id="rules" class="card">\n  <h2>Rules that ran <span class="muted">('
    yield escape(t_5((undefined(name='rule_runs') if l_0_rule_runs is missing else l_0_rule_runs)))
    yield ')</span></h2>\n'
    if (undefined(name='rule_runs') if l_0_rule_runs is missing else l_0_rule_runs):
        pass
        yield '  <table class="data rules">\n    <caption>Every rule, with how many items it examined, so a clean rule is visibly a pass (failed and unverifiable rules first)</caption>\n    <thead><tr><th scope="col">Result</th><th scope="col">Rule</th><th scope="col">Check</th><th scope="col">Severity</th><th scope="col" class="num">Checked</th><th scope="col" class="num">Violations</th><th scope="col" class="num">Cannot verify</th><th scope="col" class="num">Waived</th><th scope="col">Why · source</th></tr></thead>\n    <tbody>\n'
        for l_1_r in (undefined(name='rule_runs') if l_0_rule_runs is missing else l_0_rule_runs):
            l_1_cite = resolve('cite')
            _loop_vars = {}
            pass
            yield '      <tr class="o-'
            yield escape(environment.getattr(l_1_r, 'outcome'))
            yield '"><td><span class="badge b-o-'
            yield escape(environment.getattr(l_1_r, 'outcome'))
            yield '">'
            yield escape(environment.getitem({'pass': '✔ pass', 'fail': '✖ fail', 'cannot_verify': '? cannot verify', 'waived': '⊘ waived', 'nothing': '– nothing to check'}, environment.getattr(l_1_r, 'outcome')))
            yield '</span></td>\n      <th scope="row"><code>'
            yield escape(environment.getattr(l_1_r, 'id'))
            yield '</code>'
            if environment.getattr(l_1_r, 'title'):
                pass
                yield '<div class="muted">'
                yield escape(environment.getattr(l_1_r, 'title'))
                yield '</div>'
            yield '</th><td>'
            yield escape(environment.getattr(l_1_r, 'check'))
            if environment.getattr(l_1_r, 'signal'):
                pass
                yield ' · '
                yield escape(environment.getattr(l_1_r, 'signal'))
            yield '</td><td>'
            yield escape(environment.getattr(l_1_r, 'severity'))
            yield '</td><td class="num">'
            yield escape(environment.getattr(l_1_r, 'checked'))
            yield '</td><td class="num">'
            yield escape(environment.getattr(l_1_r, 'violations'))
            yield '</td><td class="num">'
            yield escape(environment.getattr(l_1_r, 'cannot_verify'))
            yield '</td><td class="num">'
            yield escape(environment.getattr(l_1_r, 'waived'))
            yield '</td><td class="why">'
            yield escape(environment.getattr(l_1_r, 'why'))
            yield '<div class="src">'
            yield escape(context.call((undefined(name='cite') if l_1_cite is missing else l_1_cite), environment.getattr(l_1_r, 'source'), _loop_vars=_loop_vars))
            yield '</div></td></tr>\n'
        l_1_r = l_1_cite = missing
        yield '    </tbody>\n  </table>\n'
    else:
        pass
        yield '<p class="muted">No rule ran.</p>'
    yield '</section>\n'
    if (undefined(name='references') if l_0_references is missing else l_0_references):
        pass
        yield '\n<section id="references" class="card">\n  <h2>References <span class="muted">('
        yield escape(t_5((undefined(name='references') if l_0_references is missing else l_0_references)))
        yield ')</span></h2>\n  <p class="muted">The publications the sources above cite by <code>[id]</code> (<code>rules/references.yaml</code>); <code>[U]</code> marks a number or field no public primary source confirmed.</p>\n  <ul class="refs">\n'
        for l_1_r in (undefined(name='references') if l_0_references is missing else l_0_references):
            _loop_vars = {}
            pass
            yield '    <li id="ref-'
            yield escape(environment.getattr(l_1_r, 'id'))
            yield '"><code>['
            yield escape(environment.getattr(l_1_r, 'id'))
            yield ']</code> '
            yield escape(environment.getattr(l_1_r, 'citation'))
            yield '</li>\n'
        l_1_r = missing
        yield '  </ul>\n</section>\n'
    yield '</main>\n<footer class="foot">Generated by accel-drc '
    yield escape((undefined(name='tool_version') if l_0_tool_version is missing else l_0_tool_version))
    yield '. This file is self-contained: it makes no network request.</footer>\n\n<script type="application/json" id="report-data">'
    yield escape((undefined(name='data_json') if l_0_data_json is missing else l_0_data_json))
    yield '</script>\n<script>\n'
    yield escape((undefined(name='js') if l_0_js is missing else l_0_js))
    yield '\n</script>\n</body>\n</html>'

blocks = {}
debug_info = '8=123&9=125&11=127&16=129&17=131&19=133&22=136&23=140&26=143&27=146&38=157&40=159&41=161&42=175&43=181&44=183&46=192&53=199&54=203&55=206&57=221&62=237&64=241&67=247&68=251&69=255&70=257&71=259&72=265&79=286&82=290&83=293&84=296&85=299&86=302&90=306&99=310&100=320&131=330&132=334&136=349&137=354&146=364&152=366&155=368&158=371&159=394&162=397&164=413&169=433&172=436&178=445&179=480&181=498&182=500&183=507&184=513&186=523&187=538&190=541&192=549&193=555&194=558&195=562&196=581&205=591&207=594&213=596&214=600&215=604&216=611&217=636&218=638&219=640&220=647&221=649&222=651&223=653&224=655&225=657&237=671&240=674&242=676&246=679&247=683&248=692&249=699&250=704&251=720&255=724&260=731&265=734&267=738&268=787&275=792&279=795&280=799&281=816&282=821&283=826&284=831&285=834&286=850&288=866&289=870&290=880&297=893&300=896&302=900&303=902&305=906&306=910&313=915&318=918&320=922&321=943&329=948&330=950&332=954&333=958&334=960&335=965&336=978&338=981&339=987&342=990&352=1021&353=1024&358=1027&359=1034&364=1065&369=1068&370=1072&378=1103&379=1105&384=1108&385=1113&386=1119&392=1153&395=1156&398=1158&399=1162&405=1171&407=1173&409=1175'
