
(function(){
'use strict';
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
  var shown = 0, rows = table.tBodies[0].rows;
  for(var i = 0; i < rows.length; i++){
    var r = rows[i];
    var ok = (!q || r.getAttribute('data-search').indexOf(q) >= 0) &&
             (!st || r.getAttribute('data-status') === st) && (!ph || r.getAttribute('data-phase') === ph);
    r.style.display = ok ? '' : 'none'; if(ok) shown++;
  }
  document.getElementById('op-count').textContent = shown + ' of ' + rows.length + ' ops';
  return shown;
}
document.querySelectorAll('table.sortable-table th.sortable').forEach(function(th){
  th.addEventListener('click', onHeader);
});
['op-filter', 'status-filter', 'phase-filter'].forEach(function(id){
  var el = document.getElementById(id);
  if(el){ el.addEventListener('input', applyFilter); el.addEventListener('change', applyFilter); }
});
applyFilter();
if(location.hash === '#selftest'){
  var b = document.body, table = document.getElementById('ops-table');
  try{
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
    b.setAttribute('data-selftest', 'pass');
  }catch(e){ b.setAttribute('data-selftest', 'fail: ' + e); }
}
})();
