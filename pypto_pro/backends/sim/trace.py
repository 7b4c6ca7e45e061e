"""Timeline files of a simulated launch.

* ``<kernel>.trace.json``: Chrome/Perfetto trace (``traceEvents``): one process per core, one
  track per pipe; every instruction a slice carrying op, block, bytes and source line; flow arrows
  from each ``set_flag`` (or buffer-id release) to the wait (or acquire) it satisfied. Opens in
  ui.perfetto.dev or chrome://tracing.
* ``<kernel>.timeline.html``: the same timeline, self-contained (no server, no network): zoom with
  the mouse wheel, pan by dragging, hover a slice for details; the buffer-address map below it.
* ``<kernel>.buffers.txt``: the buffer-address map per memory space.
"""
from __future__ import annotations

import html
import json
import os
from pathlib import Path

from pypto_pro.backends.sim.inst import KIND_NAMES, NPIPES, OP, PIPES, Inst, queue_name
from pypto_pro.backends.sim.report import LaunchReport

MAX_SLICES = 200_000  # beyond this the trace keeps the first blocks only (said in the file)


def _line(inst: Inst) -> str:
    loc = inst.loc
    return f"{os.path.basename(loc.path)}:{loc.line}" if loc else ""


def buffer_map(programs) -> list[dict]:
    """One row per tile slot: memory space, address range, tile, slot, declaring line."""
    rows = []
    seen = set()
    for kind, prog in programs.programs.items():
        for b in prog.buffers:
            if b.uid in seen:
                continue
            seen.add(b.uid)
            for i, a in enumerate(b.addrs):
                rows.append({"space": b.space.name, "start": a, "end": a + b.slot_bytes, "tile": b.name,
                             "slot": i if b.is_group else None, "dtype": b.tile_type.dtype.name,
                             "shape": list(b.tile_type.shape), "engine": kind.value,
                             "view_of": b.alias_of.name if b.alias_of is not None else None,
                             "line": f"{os.path.basename(b.loc.path)}:{b.loc.line}" if b.loc else ""})
    rows.sort(key=lambda r: (r["space"], r["start"], r["tile"]))
    return rows


def buffer_map_text(rows: list[dict]) -> str:
    out, space = [], None
    for r in rows:
        if r["space"] != space:
            space = r["space"]
            out.append(f"{space}:")
        slot = f" slot {r['slot']}" if r["slot"] is not None else ""
        view = f" (view of {r['view_of']})" if r["view_of"] else ""
        out.append(f"  0x{r['start']:06x}-0x{r['end']:06x}  {r['tile']}{slot}{view}  {r['dtype']}{r['shape']}  "
                   f"{r['line']}")
    return "\n".join(out) + "\n"


def chrome_trace(report: LaunchReport, events: list) -> dict:
    clock = report.clock_mhz
    trace: list[dict] = []
    cores = sorted({core for _, core, *_ in events})
    queues = sorted({inst.pipe for *_, insts, _ in events for inst in insts})
    mixed = any(q >= NPIPES for q in queues)
    for core in cores:
        label = "AI core" if mixed else "core"
        trace.append({"ph": "M", "name": "process_name", "pid": core, "args": {"name": f"{label} {core}"}})
        trace.append({"ph": "M", "name": "process_sort_index", "pid": core, "args": {"sort_index": core}})
        for q in queues:
            trace.append({"ph": "M", "name": "thread_name", "pid": core, "tid": q,
                          "args": {"name": queue_name(q, mixed)}})
            trace.append({"ph": "M", "name": "thread_sort_index", "pid": core, "tid": q, "args": {"sort_index": q}})
    slices = 0
    truncated = False
    flow_id = 0
    for block, core, offset, insts, flows in events:
        if slices + len(insts) > MAX_SLICES:
            truncated = True
            break
        slices += len(insts)
        for inst in insts:
            name = inst.name if inst.kind == OP else KIND_NAMES[inst.kind]
            args = {"op": inst.name, "block": block, "line": _line(inst)}
            if inst.nbytes:
                args["bytes"] = inst.nbytes
            if inst.path:
                args["path"] = inst.path
            ex = inst.extra
            if ex is not None and ex:
                args["sync"] = ", ".join([*(f"wait {k}" for k in ex.waits), *(f"lock {k}" for k in ex.acquires),
                                          *(f"set {k}" for k in ex.sets), *(f"unlock {k}" for k in ex.releases)])
            trace.append({"ph": "X", "name": name, "cat": PIPES[inst.pipe % NPIPES].name, "pid": core, "tid": inst.pipe,
                          "ts": (offset + inst.start) / clock, "dur": max(inst.end - inst.start, 0.01) / clock,
                          "args": args})
        for src, dst, label in flows or ():
            flow_id += 1
            mid = (offset + (src.start + src.end) / 2) / clock
            trace.append({"ph": "s", "id": flow_id, "name": label, "cat": "sync", "pid": core, "tid": src.pipe,
                          "ts": mid})
            trace.append({"ph": "f", "bp": "e", "id": flow_id, "name": label, "cat": "sync", "pid": core,
                          "tid": dst.pipe, "ts": (offset + dst.start) / clock + 1e-6})
    meta = {"summary": report.summary(), "clock_mhz": clock, "truncated": truncated}
    return {"traceEvents": trace, "displayTimeUnit": "ns", "metadata": meta}


def write_trace(directory: str | os.PathLike, kernel: str, report: LaunchReport, events: list, programs) -> list[str]:
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    data = chrome_trace(report, events)
    rows = buffer_map(programs)
    files = [out / f"{kernel}.trace.json", out / f"{kernel}.timeline.html", out / f"{kernel}.buffers.txt"]
    files[0].write_text(json.dumps(data))
    files[1].write_text(timeline_html(kernel, report, data, rows))
    files[2].write_text(buffer_map_text(rows))
    return [str(f) for f in files]


def timeline_html(kernel: str, report: LaunchReport, data: dict, rows: list[dict]) -> str:
    slices = [[e["pid"], e["tid"], round(e["ts"], 4), round(e["dur"], 4), e["name"], e["args"]]
              for e in data["traceEvents"] if e["ph"] == "X"]
    starts = {e["id"]: e for e in data["traceEvents"] if e["ph"] == "s"}
    flows = [[starts[e["id"]]["pid"], starts[e["id"]]["tid"], round(starts[e["id"]]["ts"], 4), e["tid"],
              round(e["ts"], 4)] for e in data["traceEvents"] if e["ph"] == "f" and e["id"] in starts]
    util = "".join(f"<tr><td>{p}</td><td>{u:.1%}</td><td>{report.pipe_busy[p]:.0f}</td></tr>"
                   for p, u in report.utilisation().items())
    buf_rows = "".join(
        f"<tr><td>{r['space']}</td><td>0x{r['start']:06x}</td><td>0x{r['end']:06x}</td>"
        f"<td>{html.escape(r['tile'])}</td><td>{'' if r['slot'] is None else r['slot']}</td>"
        f"<td>{r['dtype']} {r['shape']}</td><td>{html.escape(r['view_of'] or '')}</td><td>{r['line']}</td></tr>"
        for r in rows)
    nq = 1 + max((e[1] for e in slices), default=0)
    payload = json.dumps({"slices": slices, "flows": flows,
                          "pipes": [queue_name(q, nq > NPIPES) for q in range(max(nq, NPIPES))]})
    return _TEMPLATE.replace("__TITLE__", html.escape(kernel)).replace(
        "__SUMMARY__", html.escape(report.summary())).replace("__UTIL__", util).replace(
        "__BUFFERS__", buf_rows).replace("__DATA__", payload.replace("</", "<\\/")).replace(
        "__TRUNC__", "trace truncated to the first blocks" if data["metadata"]["truncated"] else "")


_TEMPLATE = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>__TITLE__ timeline</title>
<style>
body{font:13px system-ui,sans-serif;margin:12px;color:#222}
h1{font-size:16px;margin:0 0 4px} .sum{margin:4px 0 10px;color:#333}
#wrap{position:relative;border:1px solid #ccc} canvas{display:block}
#tip{position:absolute;pointer-events:none;background:#fffbe6;border:1px solid #bba;padding:4px 6px;
 font:12px monospace;white-space:pre;display:none;z-index:2}
table{border-collapse:collapse;margin-top:6px} td,th{border:1px solid #ddd;padding:2px 8px;font:12px monospace}
th{background:#f3f3f3} .row{display:flex;gap:28px;align-items:flex-start} .hint{color:#777}
</style></head><body>
<h1>__TITLE__ &mdash; simulated timeline</h1>
<div class="sum" id="summary">__SUMMARY__</div>
<div class="hint">wheel: zoom &middot; drag: pan &middot; hover: details &middot; lines: set_flag &rarr; wait_flag
 <label><input type="checkbox" id="showflows" checked> flows</label> <span>__TRUNC__</span></div>
<div id="wrap"><canvas id="cv"></canvas><div id="tip"></div></div>
<div class="row"><div><h3>Pipe utilisation</h3><table><tr><th>pipe</th><th>busy</th><th>cycles</th></tr>__UTIL__</table></div>
<div><h3>Buffer-address map</h3><table id="buffers"><tr><th>space</th><th>start</th><th>end</th><th>tile</th>
<th>slot</th><th>type</th><th>view of</th><th>line</th></tr>__BUFFERS__</table></div></div>
<script>
const D = __DATA__;
const COLORS = {load:"#4e79a7", store:"#59a14f", set_flag:"#bab0ab", wait_flag:"#e15759", lock:"#e15759",
  unlock:"#bab0ab", barrier:"#9c755f"};
function color(name){ if (COLORS[name]) return COLORS[name];
  let h=0; for (const c of name) h=(h*31+c.charCodeAt(0))%360; return `hsl(${h},55%,55%)`; }
const rows=[]; const rowOf={};
for (const s of D.slices){ const k=s[0]+":"+s[1]; if(!(k in rowOf)){ rowOf[k]=-1; rows.push([s[0],s[1]]); } }
rows.sort((a,b)=>a[0]-b[0]||a[1]-b[1]); rows.forEach((r,i)=>rowOf[r[0]+":"+r[1]]=i);
const RH=18, LW=110, cv=document.getElementById("cv"), ctx=cv.getContext("2d"), tip=document.getElementById("tip");
let t0=0, t1=1; for (const s of D.slices) t1=Math.max(t1, s[2]+s[3]);
let view=[t0, t1*1.02];
function size(){ cv.width=Math.max(600, window.innerWidth-40); cv.height=rows.length*RH+30; }
function x(t){ return LW+(t-view[0])/(view[1]-view[0])*(cv.width-LW); }
function draw(){
  ctx.clearRect(0,0,cv.width,cv.height); ctx.font="11px monospace";
  rows.forEach((r,i)=>{ ctx.fillStyle=i%2?"#fafafa":"#f0f0f0"; ctx.fillRect(0,20+i*RH,cv.width,RH);
    ctx.fillStyle="#333"; ctx.fillText("core "+r[0]+" "+D.pipes[r[1]], 4, 20+i*RH+13); });
  const span=view[1]-view[0], step=Math.pow(10, Math.floor(Math.log10(span/8)));
  ctx.fillStyle="#555";
  for (let t=Math.ceil(view[0]/step)*step; t<view[1]; t+=step){ const px=x(t);
    ctx.fillRect(px,14,1,6); ctx.fillText(t.toFixed(step<1?2:0)+"us", px+2, 11); }
  for (const s of D.slices){ const a=x(s[2]), b=x(s[2]+s[3]); if (b<LW||a>cv.width) continue;
    ctx.fillStyle=color(s[4]); ctx.fillRect(Math.max(a,LW), 22+rowOf[s[0]+":"+s[1]]*RH, Math.max(b-Math.max(a,LW),1), RH-4); }
  if (document.getElementById("showflows").checked){ ctx.strokeStyle="rgba(200,30,30,.45)"; ctx.beginPath();
    for (const f of D.flows){ const y0=20+rowOf[f[0]+":"+f[1]]*RH+RH/2, y1=20+rowOf[f[0]+":"+f[3]]*RH+RH/2;
      const a=x(f[2]), b=x(f[4]); if (Math.max(a,b)<LW) continue; ctx.moveTo(a,y0); ctx.lineTo(b,y1); }
    ctx.stroke(); }
  document.body.dataset.rendered = String(D.slices.length);
}
function hit(mx,my){ const i=Math.floor((my-20)/RH); if(i<0||i>=rows.length) return null; const t=view[0]+(mx-LW)/(cv.width-LW)*(view[1]-view[0]);
  for (const s of D.slices) if (rowOf[s[0]+":"+s[1]]===i && s[2]<=t && t<=s[2]+s[3]) return s; return null; }
let drag=null;
cv.addEventListener("wheel", e=>{ e.preventDefault(); const t=view[0]+(e.offsetX-LW)/(cv.width-LW)*(view[1]-view[0]);
  const f=e.deltaY<0?0.8:1.25; view=[t-(t-view[0])*f, t+(view[1]-t)*f]; draw(); });
cv.addEventListener("mousedown", e=>{ drag=[e.offsetX, view.slice()]; });
window.addEventListener("mouseup", ()=>{ drag=null; });
cv.addEventListener("mousemove", e=>{
  if (drag){ const dt=(e.offsetX-drag[0])/(cv.width-LW)*(drag[1][1]-drag[1][0]); view=[drag[1][0]-dt, drag[1][1]-dt]; draw(); return; }
  const s=hit(e.offsetX, e.offsetY); if(!s){ tip.style.display="none"; return; }
  const a=s[5]; tip.textContent=`${s[4]}  (${D.pipes[s[1]]}, core ${s[0]}, block ${a.block})\\nstart ${s[2].toFixed(3)} us  dur ${s[3].toFixed(3)} us`
    +(a.bytes?`\\nbytes ${a.bytes}${a.path?"  "+a.path:""}`:"")+(a.sync?`\\nsync ${a.sync}`:"")+(a.line?`\\n${a.line}`:"");
  tip.style.display="block"; tip.style.left=(e.offsetX+12)+"px"; tip.style.top=(e.offsetY+12)+"px"; });
document.getElementById("showflows").addEventListener("change", draw);
window.addEventListener("resize", ()=>{ size(); draw(); });
size(); draw();
</script></body></html>
"""
