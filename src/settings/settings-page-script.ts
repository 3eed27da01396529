// The browser side of the settings page, sent inline with the page's CSP nonce. Plain ES2017 in a
// string (no build step, nothing fetched): it reads the field descriptors embedded as JSON,
// validates the form the way the descriptors say, and implements the service's iframe contract:
// `window.formRef.validateForm()`, `window.currentFormData` and `AP.formDataUpdated(settings)`.
//
// When it publishes (the platform wipes fields it adds to the same panel, its "Select
// languages", on an AP.formDataUpdated it did not expect): once the page has loaded, the stored
// settings exactly as saved ({} when nothing is), once; afterwards only when a user's change
// leaves the form valid and different from what was last published. validateForm() validates
// and publishes nothing. Without a step to edit (the page then has no form) it publishes nothing
// and validateForm() answers false, so a save cannot write defaults over the real settings.
export const SETTINGS_PAGE_SCRIPT = String.raw`(function () {
  'use strict';
  var dataEl = document.getElementById('switchyard-settings-data');
  var data = JSON.parse(dataEl ? dataEl.textContent : '{"fields":[],"context":false}');
  var fields = data.fields;
  var form = document.getElementById('settings-form');
  var touched = {};
  var lastSent;
  var loaded = false;
  var changedBeforeLoad = false;

  function chars(s) { return Array.from(s).length; }
  function matches(pattern, s) {
    try { return new RegExp(pattern, 'u').test(s); } catch (e) { return new RegExp(pattern).test(s); }
  }
  function checkString(f, s, what) {
    if (f.minLength !== undefined && chars(s) < f.minLength) return what + 'must be at least ' + f.minLength + ' characters';
    if (f.maxLength !== undefined && chars(s) > f.maxLength) return what + 'must be at most ' + f.maxLength + ' characters';
    if (f.pattern !== undefined && !matches(f.pattern, s)) return what + 'must match the pattern ' + f.pattern;
    if (f.enum && f.enum.indexOf(s) < 0) return what + 'must be one of ' + f.enum.join(', ');
    return null;
  }
  function present(f) { return f.required ? 'This field is required' : null; }

  // -> { error: string|null, set: boolean, value: any }
  function read(f) {
    var el = document.getElementById('f-' + f.name);
    if (!el) return { error: null, set: false };
    var v, n, i;
    switch (f.kind) {
      case 'checkbox':
        return { error: null, set: true, value: el.checked };
      case 'text':
      case 'textarea':
        v = el.value;
        if (v === '') return { error: present(f), set: false };
        return { error: checkString(f, v, ''), set: true, value: v };
      case 'number':
      case 'integer':
        v = el.value.trim();
        if (v === '') return { error: el.validity && el.validity.badInput ? 'Enter a number' : present(f), set: false };
        n = Number(v);
        if (!isFinite(n)) return { error: 'Enter a number', set: false };
        if (f.kind === 'integer' && Math.floor(n) !== n) return { error: 'Enter a whole number', set: false };
        if (f.minimum !== undefined && n < f.minimum) return { error: 'Must be at least ' + f.minimum, set: false };
        if (f.maximum !== undefined && n > f.maximum) return { error: 'Must be at most ' + f.maximum, set: false };
        if (f.exclusiveMinimum !== undefined && n <= f.exclusiveMinimum) return { error: 'Must be more than ' + f.exclusiveMinimum, set: false };
        if (f.exclusiveMaximum !== undefined && n >= f.exclusiveMaximum) return { error: 'Must be less than ' + f.exclusiveMaximum, set: false };
        return { error: null, set: true, value: n };
      case 'select':
        if (el.value === '') return { error: present(f), set: false };
        i = Number(el.value);
        if (!(i >= 0 && i < f.enum.length)) return { error: 'Choose one of the options', set: false };
        return { error: null, set: true, value: f.enum[i] };
      case 'lines': {
        var items = el.value.split(/\r?\n/).map(function (s) { return s.trim(); }).filter(function (s) { return s !== ''; });
        if (items.length === 0 && f.required && !(f.minItems === 0)) return { error: 'Enter at least one line', set: false };
        if (f.minItems !== undefined && items.length < f.minItems) return { error: 'Enter at least ' + f.minItems + ' lines', set: false };
        if (f.maxItems !== undefined && items.length > f.maxItems) return { error: 'Enter at most ' + f.maxItems + ' lines', set: false };
        for (i = 0; i < items.length; i++) {
          var e = checkString(f, items[i], 'Line ' + (i + 1) + ' ');
          if (e) return { error: e, set: false };
        }
        if (items.length === 0 && !f.required) return { error: null, set: false };
        return { error: null, set: true, value: items };
      }
      case 'json':
        v = el.value.trim();
        if (v === '') return { error: present(f), set: false };
        try { return { error: null, set: true, value: JSON.parse(v) }; } catch (err) { return { error: 'Not valid JSON', set: false }; }
      default:
        return { error: null, set: false };
    }
  }

  function collect() {
    var settings = {}, errors = {}, valid = true;
    fields.forEach(function (f) {
      var r = read(f);
      if (r.error) { errors[f.name] = r.error; valid = false; }
      else if (r.set) settings[f.name] = r.value;
    });
    return { valid: valid, settings: settings, errors: errors };
  }

  function show(errors, all) {
    fields.forEach(function (f) {
      var box = document.getElementById('e-' + f.name);
      var input = document.getElementById('f-' + f.name);
      var msg = (all || touched[f.name]) ? errors[f.name] : undefined;
      if (box) { box.textContent = msg || ''; box.hidden = !msg; }
      if (input) { if (msg) input.setAttribute('aria-invalid', 'true'); else input.removeAttribute('aria-invalid'); }
    });
  }

  function publish(settings) {
    window.currentFormData = settings;
    var json = JSON.stringify(settings);
    if (json === lastSent) return;
    lastSent = json;
    if (typeof window.AP !== 'undefined' && window.AP && typeof window.AP.formDataUpdated === 'function') {
      window.AP.formDataUpdated(settings);
    }
  }

  function onChange(event) {
    var name = event.target && event.target.getAttribute ? event.target.getAttribute('data-name') : null;
    if (name) touched[name] = true;
    var r = collect();
    show(r.errors, false);
    if (!loaded) { changedBeforeLoad = true; return; }
    if (r.valid) publish(r.settings);
  }

  if (!data.context) {
    // No step to edit: nothing to show, publish or save.
    window.formRef = { validateForm: function () { return false; } };
    return;
  }

  window.formRef = {
    validateForm: function () {
      var r = collect();
      show(r.errors, true);
      return r.valid;
    }
  };

  if (form) {
    form.addEventListener('input', onChange);
    form.addEventListener('change', onChange);
    form.addEventListener('submit', function (e) { e.preventDefault(); window.formRef.validateForm(); });
  }

  function onLoad() {
    if (loaded) return;
    loaded = true;
    publish(data.stored || {});
    if (changedBeforeLoad) {
      var r = collect();
      if (r.valid) publish(r.settings);
    }
  }
  if (document.readyState === 'complete') onLoad();
  else window.addEventListener('load', onLoad);
})();
`
