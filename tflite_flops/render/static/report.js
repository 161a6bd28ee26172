
(function(){
'use strict';
var errors = [];  // what the page's selftest reports: an error no script caught
window.addEventListener('error', function(e){ errors.push(String(e.message)); });
var limit = null;  // the per-op table's rows shown at most (its data-limit, the top ops first); null: every row
var by = '';  // what the per-op table is sorted by, as its count says
function cellKey(td, num){
  if(!td) return num ? -Infinity : '';
  var v = td.getAttribute('data-v');
  if(num){ var x = parseFloat(v === null ? td.textContent : v); return isNaN(x) ? -Infinity : x; }
  return (v === null ? td.textContent : v).toLowerCase();
}
function sortTable(table, col, dir){
  var th = table.tHead.rows[0].cells[col];
  var num = th.getAttribute('data-type') === 'num';
  var body = table.tBodies[0];
  var rows = Array.prototype.slice.call(body.rows);
  rows.forEach(function(r, i){ r._i = i; });
  rows.sort(function(a, b){
    var x = cellKey(a.cells[col], num), y = cellKey(b.cells[col], num);
    if(x < y) return -dir; if(x > y) return dir; return a._i - b._i;
  });
  rows.forEach(function(r){ body.appendChild(r); });
  Array.prototype.forEach.call(table.tHead.rows[0].cells, function(c){ c.removeAttribute('aria-sort'); });
  th.setAttribute('aria-sort', dir > 0 ? 'ascending' : 'descending');
  if(table.id === 'ops-table'){
    by = th.textContent + (dir > 0 ? ', smallest first' : '');
    applyFilter();
  }
}
function onHeader(ev){
  var th = ev.currentTarget, table = th.closest('table');
  var cur = th.getAttribute('aria-sort');
  var dir = cur ? (cur === 'ascending' ? -1 : 1) : (th.getAttribute('data-type') === 'num' ? -1 : 1);
  sortTable(table, th.cellIndex, dir);
}
function applyFilter(){
  var table = document.getElementById('ops-table'); if(!table) return 0;
  var q = (document.getElementById('op-filter').value || '').toLowerCase().trim();
  var st = document.getElementById('status-filter').value;
  var ph = document.getElementById('phase-filter').value;
  var matched = 0, shown = 0, rows = table.tBodies[0].rows;
  for(var i = 0; i < rows.length; i++){
    var r = rows[i];
    var ok = (!q || r.getAttribute('data-search').indexOf(q) >= 0) &&
             (!st || r.getAttribute('data-status') === st) && (!ph || r.getAttribute('data-phase') === ph);
    if(ok) matched++;
    var show = ok && (limit === null || matched <= limit);
    r.style.display = show ? '' : 'none'; if(show) shown++;
  }
  document.getElementById('op-count').textContent = shown < matched ?
    'the first ' + shown + ' of ' + matched + (matched < rows.length ? ' matching' : '') + ' ops by ' + by :
    shown + ' of ' + rows.length + ' ops';
  return matched;
}
function showAll(ev){
  var button = ev.currentTarget, table = document.getElementById('ops-table');
  limit = limit === null ? parseInt(table.getAttribute('data-limit'), 10) : null;
  button.textContent = button.getAttribute(limit === null ? 'data-top' : 'data-all');
  applyFilter();
}
document.querySelectorAll('table.sortable-table th.sortable').forEach(function(th){
  th.addEventListener('click', onHeader);
});
['op-filter', 'status-filter', 'phase-filter'].forEach(function(id){
  var el = document.getElementById(id);
  if(el){ el.addEventListener('input', applyFilter); el.addEventListener('change', applyFilter); }
});
var opsTable = document.getElementById('ops-table');
if(opsTable && opsTable.getAttribute('data-limit')){  // a long table: its top ops first, by time or FLOPs
  limit = parseInt(opsTable.getAttribute('data-limit'), 10);
  var rank = opsTable.querySelector('th[data-key=' + opsTable.getAttribute('data-rank-key') + ']');
  if(rank){
    sortTable(opsTable, rank.cellIndex, -1);
    var body = opsTable.tBodies[0], later = [];  // the ops run per inference first (init, not executed after)
    Array.prototype.forEach.call(body.rows, function(r){ if(r.getAttribute('data-phase') !== 'inference') later.push(r); });
    later.forEach(function(r){ body.appendChild(r); });
    if(later.length){ by += ' (the ops run per inference first)'; applyFilter(); }
  }
  document.getElementById('show-all').addEventListener('click', showAll);
}
applyFilter();
if(location.hash === '#selftest'){
  var b = document.body, table = document.getElementById('ops-table');
  try{
    var cards = document.getElementById('totals').getBoundingClientRect();
    b.setAttribute('data-selftest-cards-bottom', String(Math.ceil(cards.bottom + window.scrollY)));
    b.setAttribute('data-selftest-height', String(document.documentElement.scrollHeight));
    b.setAttribute('data-selftest-ops-height', String(Math.ceil(document.getElementById('ops').getBoundingClientRect().height)));
    var visible = function(){
      var n = 0, rs = table.tBodies[0].rows;
      for(var v = 0; v < rs.length; v++){ if(rs[v].style.display !== 'none') n++; }
      return n;
    };
    b.setAttribute('data-selftest-rows-shown', String(visible()));
    b.setAttribute('data-selftest-rows', String(table.tBodies[0].rows.length));
    var all = document.getElementById('show-all');
    if(all){
      all.click(); b.setAttribute('data-selftest-rows-all', String(visible()));
      all.click(); b.setAttribute('data-selftest-rows-again', String(visible()));
    }
    var order = table.querySelector('th[data-key=order]');
    sortTable(table, order.cellIndex, 1);  // execution order, then a click on FLOPs: largest first
    var th = table.querySelector('th[data-key=flops]');
    th.click();
    var first = null, rows = table.tBodies[0].rows;
    for(var i = 0; i < rows.length; i++){ if(rows[i].style.display !== 'none'){ first = rows[i]; break; } }
    b.setAttribute('data-selftest-first', first ? first.getAttribute('data-op') : '');
    var flops = [];
    for(var j = 0; j < Math.min(rows.length, 5); j++){ flops.push(rows[j].cells[th.cellIndex].getAttribute('data-v')); }
    b.setAttribute('data-selftest-flops', flops.join(','));
    b.setAttribute('data-selftest-sort', th.getAttribute('aria-sort'));
    var f = document.getElementById('op-filter'); f.value = 'conv';
    b.setAttribute('data-selftest-filtered', String(applyFilter()));
    f.value = ''; applyFilter();
    b.setAttribute('data-selftest-charts', String(document.querySelectorAll('svg.chart').length));
    var over = 0;
    document.querySelectorAll('.scroll').forEach(function(s){ over = Math.max(over, s.scrollWidth - s.clientWidth); });
    b.setAttribute('data-selftest-overflow', String(over));
    var heads = table.tHead.rows[0].cells, last = heads[heads.length - 1].getBoundingClientRect();
    var box = table.parentNode.getBoundingClientRect();
    b.setAttribute('data-selftest-last-column', heads[heads.length - 1].textContent + ' ' +
                   (last.width > 0 && last.right <= box.right + 1 ? 'visible' : 'cut'));
    var mid = 0, breaks = 0;  // line breaks inside names, and those between two letters or digits
    document.querySelectorAll('td.name').forEach(function(td){
      var walk = document.createTreeWalker(td, NodeFilter.SHOW_TEXT), prev = null, node;
      while((node = walk.nextNode())){
        for(var k = 0; k < node.length; k++){
          var rg = document.createRange(); rg.setStart(node, k); rg.setEnd(node, k + 1);
          var rc = rg.getClientRects()[0]; if(!rc) continue;
          var ch = node.data.charAt(k);
          if(prev && rc.top > prev.top + 2){ breaks++; if(/[A-Za-z0-9]/.test(prev.ch) && /[A-Za-z0-9]/.test(ch)) mid++; }
          prev = {top: rc.top, ch: ch};
        }
      }
    });
    b.setAttribute('data-selftest-name-breaks', String(breaks));
    b.setAttribute('data-selftest-midword', String(mid));
    b.setAttribute('data-selftest-errors', String(errors.length) + (errors.length ? ': ' + errors.join(' | ') : ''));
    b.setAttribute('data-selftest', 'pass');
  }catch(e){ b.setAttribute('data-selftest', 'fail: ' + e); }
}
})();
