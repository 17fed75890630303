// Sluice console: a client of the management API scripts use (no framework, nothing fetched from elsewhere).
// Every few seconds it reads partitions, exporting, exporters and backfills, and redraws. Actions go through a
// dialog that shows what they will do first; the bearer token, when the gateway asks for one, lives in
// sessionStorage (this tab only).
'use strict';

(function () {
  const BASE = document.querySelector('meta[name="sluice-management-base-path"]').content || '/actuator';
  const REFRESH_MS = 3000;
  const SPARK_SAMPLES = 100; // 100 × 3 s = the last 5 minutes
  const TOKEN_KEY = 'sluice.management.token';
  const $ = (id) => document.getElementById(id);

  const view = { cluster: null, exporting: null, exporters: null, backfills: null };
  const lagHistory = new Map(); // "exporter/partition" -> [lag, ...]
  let selectedBackfill = null;
  let lastOperation = null; // {operation, soft, answer}
  let refreshing = false;

  // ---- HTTP -------------------------------------------------------------------------------------------------

  class ApiError extends Error {
    constructor(status, body, text) {
      super(describeError(status, body, text));
      this.status = status;
      this.body = body;
    }
  }

  function describeError(status, body, text) {
    const reason = body && body.error ? body.error : 'HTTP ' + status;
    const message = body && body.message ? body.message : (text || '').slice(0, 300);
    return 'The gateway refused this (' + status + ' ' + reason + '): ' + message;
  }

  /** Calls the management API; answers {status, body}; throws ApiError for 4xx/5xx (except `accept`ed ones). */
  async function api(method, path, body, accept) {
    const headers = { 'Accept': 'application/json' };
    const token = sessionStorage.getItem(TOKEN_KEY);
    if (token && method !== 'GET') {
      headers['Authorization'] = 'Bearer ' + token;
    }
    if (body !== undefined) {
      headers['Content-Type'] = 'application/json';
    }
    let response;
    try {
      response = await fetch(BASE + path, {
        method, headers, body: body === undefined ? undefined : JSON.stringify(body), cache: 'no-store'
      });
    } catch (e) {
      setUnreachable('The gateway is unreachable (' + e.message + '); retrying every ' + REFRESH_MS / 1000 + ' s.');
      throw new Error('The gateway is unreachable: ' + e.message);
    }
    setUnreachable(null);
    const text = await response.text();
    let json = null;
    try { json = text ? JSON.parse(text) : null; } catch (e) { json = null; }
    if (response.ok || (accept && accept.includes(response.status))) {
      return { status: response.status, body: json };
    }
    throw new ApiError(response.status, json, text);
  }

  /** A mutating call: on 401 asks for the token and tries once more with it. */
  async function act(method, path, body, accept) {
    try {
      return await api(method, path, body, accept);
    } catch (e) {
      if (e instanceof ApiError && e.status === 401) {
        const entered = await askToken(e.message);
        if (entered) {
          return api(method, path, body, accept);
        }
      }
      throw e;
    }
  }

  // ---- banners, token ---------------------------------------------------------------------------------------

  function setUnreachable(message) {
    const banner = $('unreachable');
    banner.hidden = !message;
    banner.textContent = message || '';
  }

  function showError(message) {
    $('error-text').textContent = message;
    $('error').hidden = false;
  }

  function askToken(reason) {
    return new Promise((resolve) => {
      const dialog = $('token-dialog');
      $('token-reason').textContent = reason || 'Mutating calls need the management token when sluice.management.token is set.';
      $('token-input').value = '';
      const done = (value) => {
        $('token-form').onsubmit = null;
        $('token-cancel').onclick = null;
        dialog.close();
        resolve(value);
      };
      $('token-form').onsubmit = (event) => {
        event.preventDefault();
        const token = $('token-input').value.trim();
        if (token) {
          sessionStorage.setItem(TOKEN_KEY, token);
        }
        done(!!token);
      };
      $('token-cancel').onclick = () => done(false);
      $('token-forget').onclick = () => { sessionStorage.removeItem(TOKEN_KEY); done(false); };
      dialog.showModal();
      $('token-input').focus();
    });
  }

  // ---- confirmation dialog ----------------------------------------------------------------------------------

  /**
   * Shows a dialog: `render(body)` fills it; `typed` (optional) must be typed before Confirm is enabled;
   * `onConfirm()` runs the action: a thrown error is shown in the dialog, which stays open.
   */
  function confirmDialog({ title, render, typed, confirmLabel, onConfirm }) {
    const dialog = $('confirm-dialog');
    $('confirm-title').textContent = title;
    const body = $('confirm-body');
    body.replaceChildren();
    $('confirm-error').hidden = true;
    const ok = $('confirm-ok');
    ok.textContent = confirmLabel || 'Confirm';
    ok.disabled = false;
    const input = $('confirm-typed-input');
    input.value = '';
    $('confirm-typed').hidden = !typed;
    const check = () => { ok.disabled = !!typed && input.value !== typed(); };
    if (typed) {
      $('confirm-typed-expected').textContent = typed();
      input.oninput = check;
    }
    const fail = (e) => {
      $('confirm-error').textContent = e.message;
      $('confirm-error').hidden = false;
    };
    const state = { fail, check };
    $('confirm-cancel').onclick = () => dialog.close();
    $('confirm-form').onsubmit = async (event) => {
      event.preventDefault();
      ok.disabled = true;
      $('confirm-error').hidden = true;
      try {
        await onConfirm();
        dialog.close();
      } catch (e) {
        fail(e);
      } finally {
        check();
      }
    };
    render(body, state);
    check();
    dialog.showModal();
  }

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (name === 'class') node.className = value; else node.setAttribute(name, value === true ? '' : value);
    }
    for (const child of children) {
      if (child === null || child === undefined) continue;
      node.append(child instanceof Node ? child : String(child));
    }
    return node;
  }

  // ---- actions ----------------------------------------------------------------------------------------------

  const OPERATIONS = {
    pause: { label: 'Pause', path: '/exporting/pause', verb: 'pause exporting' },
    softPause: { label: 'Soft pause', path: '/exporting/pause?soft=true', verb: 'soft pause exporting (exports go on, nothing is acknowledged)' },
    resume: { label: 'Resume', path: '/exporting/resume', verb: 'resume exporting' }
  };

  function pairsOfCluster() {
    return view.exporting ? view.exporting.targets.map((t) => ({ brokerId: t.brokerId, partitionId: t.partitionId, state: t.state })) : [];
  }

  function openExportingDialog(kind) {
    const op = OPERATIONS[kind];
    confirmDialog({
      title: op.label + ' every pair',
      confirmLabel: op.label,
      render: (body) => {
        const pairs = pairsOfCluster();
        const unknown = pairs.filter((p) => p.state === 'UNKNOWN');
        body.append(el('p', {}, 'This will ' + op.verb + ' on all ' + pairs.length + ' (broker, partition) pairs' +
          (view.cluster ? ' (' + view.cluster.clusterSize + ' brokers × ' + view.cluster.partitionCount + ' partitions × RF ' +
            view.cluster.replicationFactor + ')' : '') + '.'));
        const byState = countBy(pairs, (p) => p.state);
        body.append(el('p', {}, 'Now: ' + Object.entries(byState).map(([s, n]) => n + ' ' + s).join(', ') + '.'));
        if (unknown.length) {
          body.append(el('p', { class: 'outcome-FAILED' }, unknown.length + ' pairs are on unreachable brokers (' +
            [...new Set(unknown.map((p) => p.brokerId))].map((b) => 'broker ' + b).join(', ') +
            ') and will be reported failed; you can retry just those once the brokers are back.'));
        }
      },
      onConfirm: () => runExporting(kind, undefined)
    });
  }

  async function runExporting(kind, targets) {
    const op = OPERATIONS[kind];
    const answer = await act('POST', op.path, targets ? { targets } : undefined, [503, 504]);
    lastOperation = { kind, answer };
    showOperation();
    refresh();
  }

  function showOperation() {
    const box = $('operation-result');
    if (!lastOperation) { box.hidden = true; return; }
    const { kind, answer } = lastOperation;
    const result = answer.body;
    box.hidden = false;
    $('operation-title').textContent = OPERATIONS[kind].label + ': ' + result.result + ' (HTTP ' + answer.status + ')';
    const failed = result.targets.filter((t) => t.outcome !== 'SUCCEEDED');
    const counts = countBy(result.targets, (t) => t.outcome);
    $('operation-summary').textContent = Object.entries(counts).map(([o, n]) => n + ' ' + o).join(', ') +
      (failed.length ? '. The failed pairs keep their old state until retried.' : '.');
    const tbody = $('operation-failures').querySelector('tbody');
    tbody.replaceChildren(...failed.map((t) => el('tr', { 'data-broker': t.brokerId, 'data-partition': t.partitionId },
      el('td', {}, t.brokerId), el('td', {}, t.partitionId), el('td', { class: 'outcome-' + t.outcome }, t.outcome),
      el('td', {}, t.error || ''))));
    $('operation-failures').hidden = failed.length === 0;
    const retry = $('retry-failed');
    retry.hidden = failed.length === 0;
    retry.textContent = 'Retry the ' + failed.length + ' failed pairs';
    retry.onclick = async () => {
      retry.disabled = true;
      try {
        await runExporting(kind, failed.map((t) => ({ brokerId: t.brokerId, partitionId: t.partitionId })));
      } catch (e) {
        showError(e.message);
      } finally {
        retry.disabled = false;
      }
    };
    renderGrid();
  }

  function openRebalanceDialog() {
    confirmDialog({
      title: 'Rebalance leaders',
      confirmLabel: 'Rebalance',
      render: (body) => {
        const moves = (view.cluster ? view.cluster.partitions : []).filter((p) => p.leaderId !== p.preferredLeaderId);
        body.append(el('p', {}, moves.length ?
          'These partitions will move their leadership to their preferred broker (where that replica is caught up):' :
          'Every partition is already led by its preferred broker; nothing should move.'));
        if (moves.length) {
          body.append(el('ul', {}, ...moves.map((p) => el('li', {}, 'partition ' + p.partitionId + ': broker ' +
            p.leaderId + ' → broker ' + p.preferredLeaderId))));
        }
      },
      onConfirm: async () => {
        const answer = await act('POST', '/rebalance', undefined, [503]);
        const off = answer.body.partitions.filter((p) => p.outcome !== 'SUCCEEDED');
        if (off.length) {
          showError('Rebalance: ' + off.length + ' partitions are not on their preferred broker: ' +
            off.map((p) => 'partition ' + p.partitionId + ' (' + (p.error || p.outcome) + ')').join('; '));
        }
        refresh();
      }
    });
  }

  function openResetDialog(exporterId) {
    let plan = null;
    confirmDialog({
      title: 'Reset ' + exporterId + ' to latest and backfill',
      confirmLabel: 'Reset and backfill',
      typed: () => exporterId,
      render: (body, state) => {
        const tasks = el('input', { type: 'text', id: 'reset-task-count', inputmode: 'numeric', placeholder: 'default: one per partition' });
        const show = el('button', { type: 'button', id: 'reset-dry-run' }, 'Show the plan');
        const planBox = el('div', { id: 'reset-plan' });
        body.append(
          el('p', {}, 'Moves ' + exporterId + '\u2019s position on every partition to the latest committed record, ' +
            'and exports the skipped records again with supervised backfill tasks. Nothing changes until you confirm.'),
          el('label', { for: 'reset-task-count' }, 'Backfill tasks'), tasks, ' ', show, planBox);
        // The dialog asks for the default plan as it opens, and again on each click: only the latest question's
        // answer is shown, so a slow answer to an earlier one cannot replace the plan for the count typed since.
        let asked = 0;
        const dryRun = () => {
          const question = ++asked;
          planBox.replaceChildren(el('p', {}, 'Asking the gateway for the plan…'));
          plan = null;
          return act('POST', resetPath(exporterId, tasks.value, true)).then((answer) => {
            if (question !== asked) return;
            plan = answer.body;
            renderPlan(planBox, plan);
          }, (e) => {
            if (question !== asked) return;
            planBox.replaceChildren();
            state.fail(e);
          });
        };
        show.onclick = dryRun;
        dryRun();
      },
      onConfirm: async () => {
        const count = $('reset-task-count').value;
        const answer = await act('POST', resetPath(exporterId, count, false));
        selectedBackfill = answer.body.backfillId;
        await refresh();
        $('backfills').scrollIntoView();
      }
    });
  }

  function resetPath(exporterId, taskCount, dryRun) {
    const query = [];
    if (taskCount.trim() !== '') query.push('backfillTaskCount=' + encodeURIComponent(taskCount.trim()));
    if (dryRun) query.push('dryRun=true');
    return '/exporters/' + encodeURIComponent(exporterId) + '/resetToLatestAndBackfill' + (query.length ? '?' + query.join('&') : '');
  }

  function renderPlan(box, plan) {
    const rows = plan.partitions.map((p) => el('tr', {},
      el('td', {}, p.partitionId), el('td', { class: 'num' }, p.oldPosition), el('td', { class: 'num' }, p.newPosition),
      el('td', {}, p.newPosition > p.oldPosition ? (p.fromPosition + ' … ' + p.toPosition) : 'nothing skipped'),
      el('td', { class: 'num' }, p.taskCount)));
    const unavailable = plan.unavailable && plan.unavailable.length ?
      el('p', { class: 'outcome-FAILED' }, 'Not held by the log any more (compacted), so not backfilled: ' +
        plan.unavailable.map((u) => 'partition ' + u.partitionId + ' ' + u.fromPosition + ' … ' + u.toPosition).join('; ')) : null;
    box.replaceChildren(
      el('h4', {}, 'Dry-run plan: ' + plan.backfillTaskCount + ' backfill tasks over ' + plan.ranges.length + ' partitions'),
      el('table', { class: 'data', id: 'reset-plan-table' },
        el('thead', {}, el('tr', {}, el('th', {}, 'Partition'), el('th', {}, 'Position now'), el('th', {}, 'Moves to'),
          el('th', {}, 'Range backfilled'), el('th', {}, 'Tasks'))),
        el('tbody', {}, ...rows)),
      ...(unavailable ? [unavailable] : []));
  }

  function openCancelDialog(backfill) {
    confirmDialog({
      title: 'Cancel backfill ' + backfill.backfillId,
      confirmLabel: 'Cancel the backfill',
      typed: () => backfill.exporterId,
      render: (body) => body.append(el('p', {}, 'Its unfinished tasks stop; the records they have not exported yet stay ' +
        'un-exported to ' + backfill.exporterId + ' (' + (backfill.totalPositions - backfill.exportedPositions) + ' positions).')),
      onConfirm: async () => {
        await act('DELETE', '/backfills/' + encodeURIComponent(backfill.backfillId));
        refresh();
      }
    });
  }

  // ---- rendering --------------------------------------------------------------------------------------------

  function countBy(items, key) {
    const counts = {};
    for (const item of items) counts[key(item)] = (counts[key(item)] || 0) + 1;
    return counts;
  }

  function renderCluster() {
    const c = view.cluster;
    if (!c) return;
    const reachable = c.brokers.filter((b) => b.reachable).length;
    const unhealthy = c.partitions.filter((p) => p.health !== 'HEALTHY').length;
    $('cluster-summary').textContent = c.clusterSize + ' brokers (' + reachable + ' reachable), ' + c.partitionCount +
      ' partitions, replication factor ' + c.replicationFactor + '; control group leader: ' +
      (c.controlLeaderId >= 0 ? 'broker ' + c.controlLeaderId : 'none known') +
      (unhealthy ? '; ' + unhealthy + ' partitions not healthy' : '; every partition healthy') + '.';
    $('brokers').querySelector('tbody').replaceChildren(...c.brokers.map((b) => el('tr', { 'data-broker': b.brokerId },
      el('td', {}, b.brokerId), el('td', {}, b.address),
      el('td', { class: b.reachable ? '' : 'health-bad' }, b.reachable ? 'yes' : 'no' + (b.reason ? ': ' + b.reason : '')),
      el('td', {}, b.leaderOf.length + (b.leaderOf.length ? ' (' + b.leaderOf.join(', ') + ')' : '')),
      el('td', {}, b.preferredLeaderOf.length),
      el('td', {}, (b.brokerId === c.controlLeaderId ? 'leader' : 'member') + (b.controlCaughtUp ? '' : ', catching up')))));
    $('partitions').querySelector('tbody').replaceChildren(...c.partitions.map((p) => el('tr', {},
      el('td', {}, p.partitionId), el('td', {}, p.leaderId >= 0 ? p.leaderId : 'none'), el('td', {}, p.preferredLeaderId),
      el('td', { class: p.health === 'HEALTHY' ? '' : 'health-bad' }, p.health),
      el('td', {}, p.replicas.map((r) => r.brokerId + ': ' + r.role + ', ' + r.lastPosition + ' / ' + r.exportedPosition).join('; ')))));
  }

  function renderGrid() {
    const status = view.exporting;
    if (!status) return;
    const badge = $('exporting-state');
    badge.textContent = status.state;
    badge.className = 'state-badge state-' + status.state;
    const counts = countBy(status.targets, (t) => t.state);
    $('exporting-counts').textContent = (status.state === 'MIXED' ? 'MIXED: the pairs disagree. ' : '') +
      Object.entries(counts).map(([s, n]) => n + ' ' + s).join(', ') + ' of ' + status.targets.length + ' pairs.';
    const brokers = [...new Set(status.targets.map((t) => t.brokerId))].sort((a, b) => a - b);
    const partitions = [...new Set(status.targets.map((t) => t.partitionId))].sort((a, b) => a - b);
    const byPair = new Map(status.targets.map((t) => [t.brokerId + '/' + t.partitionId, t]));
    const failed = new Set(lastOperation ? lastOperation.answer.body.targets.filter((t) => t.outcome !== 'SUCCEEDED')
      .map((t) => t.brokerId + '/' + t.partitionId) : []);
    const grid = $('pair-grid');
    grid.querySelector('thead').replaceChildren(el('tr', {}, el('th', { scope: 'col' }, 'broker \\ partition'),
      ...partitions.map((p) => el('th', { scope: 'col' }, p))));
    const letter = { EXPORTING: 'E', PAUSED: 'P', SOFT_PAUSED: 'S', UNKNOWN: '?' };
    grid.querySelector('tbody').replaceChildren(...brokers.map((b) => el('tr', {}, el('th', { scope: 'row' }, 'broker ' + b),
      ...partitions.map((p) => {
        const t = byPair.get(b + '/' + p);
        if (!t) return el('td', {}, '');
        const text = 'broker ' + b + ', partition ' + p + ': ' + t.state + ' (' + t.role + '), acknowledged ' + t.exportedPosition +
          (t.sentPosition != null && t.sentPosition !== t.exportedPosition ? ', sent ' + t.sentPosition : '') +
          ' of ' + t.lastPosition + (failed.has(b + '/' + p) ? '; the last operation failed here' : '');
        return el('td', {
          class: 'pair state-' + t.state + (failed.has(b + '/' + p) ? ' cell-failed' : ''), 'data-broker': b,
          'data-partition': p, 'data-state': t.state, title: text, 'aria-label': text
        }, letter[t.state] || '?');
      }))));
  }

  function sparkline(values) {
    const ns = 'http://www.w3.org/2000/svg';
    const svg = document.createElementNS(ns, 'svg');
    svg.setAttribute('class', 'sparkline');
    svg.setAttribute('viewBox', '0 0 100 20');
    svg.setAttribute('preserveAspectRatio', 'none');
    svg.setAttribute('role', 'img');
    svg.setAttribute('aria-label', 'lag over the last ' + values.length + ' samples: ' + values.join(', '));
    const max = Math.max(1, ...values);
    const step = values.length > 1 ? 100 / (SPARK_SAMPLES - 1) : 0;
    const start = 100 - step * (values.length - 1);
    const line = document.createElementNS(ns, 'polyline');
    line.setAttribute('points', values.map((v, i) => (start + i * step).toFixed(1) + ',' + (19 - 18 * Math.max(0, v) / max).toFixed(1)).join(' '));
    svg.append(line);
    return svg;
  }

  function recordLag(exporters) {
    for (const e of exporters) {
      let total = 0;
      for (const p of e.partitions) {
        push(e.id + '/' + p.partitionId, p.lag);
        total += Math.max(0, p.lag);
      }
      push(e.id, total);
    }
    function push(key, value) {
      const values = lagHistory.get(key) || [];
      values.push(value);
      if (values.length > SPARK_SAMPLES) values.shift();
      lagHistory.set(key, values);
    }
  }

  function renderExporters() {
    const list = view.exporters ? view.exporters.exporters : [];
    const open = new Set([...document.querySelectorAll('#exporters-list details[open]')].map((d) => d.dataset.exporter));
    $('exporters-list').replaceChildren(...(list.length ? list.map((e) => {
      const totalLag = e.partitions.reduce((sum, p) => sum + Math.max(0, p.lag), 0);
      const retrying = e.partitions.filter((p) => p.state === 'RETRYING');
      const reset = el('button', { type: 'button', class: 'reset', 'data-exporter': e.id }, 'Reset to latest and backfill…');
      reset.onclick = () => openResetDialog(e.id);
      const rows = e.partitions.map((p) => el('tr', { 'data-partition': p.partitionId },
        el('td', {}, p.partitionId), el('td', { class: 'num' }, p.position), el('td', { class: 'num' }, p.lag),
        el('td', { class: 'num' }, p.sentPosition), el('td', { class: 'num' }, p.sentLag),
        el('td', { class: 'state-' + p.state }, p.state), el('td', {}, p.lastError || ''),
        el('td', {}, sparkline(lagHistory.get(e.id + '/' + p.partitionId) || []))));
      const details = el('details', { 'data-exporter': e.id, open: open.has(e.id) || retrying.length > 0 },
        el('summary', {}, 'Per partition'),
        el('table', { class: 'data' },
          el('thead', {}, el('tr', {}, el('th', {}, 'Partition'),
            el('th', { title: 'acknowledged: compaction and a new leader go by it' }, 'Position'), el('th', {}, 'Lag'),
            el('th', { title: 'sent to the sink; ahead of Position during a soft pause or a bulk in flight' }, 'Sent'),
            el('th', {}, 'Sent lag'), el('th', {}, 'State'), el('th', {}, 'Last error'), el('th', {}, 'Lag, last minutes'))),
          el('tbody', {}, ...rows)));
      return el('div', { class: 'exporter', 'data-exporter': e.id },
        el('h3', {}, e.id + ' (' + (e.type || 'unknown type') + ')', el('span', {}, 'lag ' + totalLag),
          sparkline(lagHistory.get(e.id) || []), reset),
        retrying.length ? el('p', { class: 'state-RETRYING' }, retrying.length + ' partitions RETRYING: ' +
          retrying.map((p) => 'partition ' + p.partitionId + ': ' + (p.lastError || 'no error given')).join('; ')) : null,
        details);
    }) : [el('p', {}, 'No exporter is configured.')]));
  }

  function progressBar(fraction, label) {
    return el('progress', { max: '1', value: String(Math.min(1, Math.max(0, fraction))), 'aria-label': label },
      Math.round(fraction * 100) + '%');
  }

  function renderBackfills() {
    const list = view.backfills;
    if (!list) return;
    const notes = [];
    if (list.unavailablePartitions && list.unavailablePartitions.length) {
      notes.push('Partitions ' + list.unavailablePartitions.join(', ') + ' could not be asked: their tasks are missing.');
    }
    if (list.controlGroupUnavailable) notes.push(list.controlGroupUnavailable);
    $('backfills-note').textContent = notes.join(' ') || (list.backfills.length ? '' : 'No backfill yet.');
    $('backfill-list').querySelector('tbody').replaceChildren(...list.backfills.map((b) => {
      const show = el('button', { type: 'button' }, 'Details');
      show.onclick = () => { selectedBackfill = b.backfillId; renderBackfills(); };
      return el('tr', { 'data-backfill': b.backfillId, 'data-state': b.state, class: b.backfillId === selectedBackfill ? 'selected' : '' },
        el('td', {}, b.backfillId), el('td', {}, b.exporterId), el('td', { class: 'backfill-state' }, b.state),
        el('td', {}, progressBar(b.progress, 'progress of ' + b.backfillId), ' ' + Math.round(b.progress * 100) + '%'),
        el('td', {}, new Date(b.createdAtMs).toLocaleString()), el('td', {}, show));
    }));
    const detail = list.backfills.find((b) => b.backfillId === selectedBackfill);
    $('backfill-detail').hidden = !detail;
    if (!detail) return;
    $('backfill-detail-title').textContent = 'Backfill ' + detail.backfillId + ' of ' + detail.exporterId + ': ' + detail.state;
    $('backfill-detail').dataset.state = detail.state;
    $('backfill-detail-summary').textContent = detail.exportedPositions + ' of ' + detail.totalPositions + ' positions exported (' +
      Math.round(detail.progress * 100) + '%), ' + detail.ratePerSecond.toFixed(1) + ' positions/s, ' + detail.tasks.length + ' tasks' +
      (detail.unavailablePartitions.length ? '; partitions ' + detail.unavailablePartitions.join(', ') + ' could not be asked' : '') + '.';
    const cancel = $('backfill-cancel');
    cancel.hidden = !(detail.state === 'PENDING' || detail.state === 'RUNNING');
    cancel.onclick = () => openCancelDialog(detail);
    $('backfill-tasks').querySelector('tbody').replaceChildren(...detail.tasks.map((t) => el('tr', { 'data-task': t.taskId },
      el('td', {}, t.taskId), el('td', {}, t.partitionId), el('td', {}, t.fromPosition + ' … ' + t.toPosition),
      el('td', { class: 'state-' + t.state }, t.state + (t.failureReason ? ': ' + t.failureReason : '')),
      el('td', { class: 'num' }, t.exportedUpTo), el('td', { class: 'num' }, t.attempts),
      el('td', {}, progressBar(t.progress, 'progress of task ' + t.taskId), ' ' + Math.round(t.progress * 100) + '%'))));
  }

  // ---- refresh loop -----------------------------------------------------------------------------------------

  async function refresh() {
    if (refreshing) return;
    refreshing = true;
    try {
      const reads = await Promise.allSettled([
        api('GET', '/partitions'), api('GET', '/exporting'), api('GET', '/exporters'), api('GET', '/backfills')]);
      const names = ['cluster', 'exporting', 'exporters', 'backfills'];
      const problems = [];
      reads.forEach((read, i) => {
        if (read.status === 'fulfilled') view[names[i]] = read.value.body;
        else problems.push(names[i] + ': ' + read.reason.message);
      });
      if (reads[2].status === 'fulfilled') recordLag(view.exporters.exporters);
      renderCluster();
      renderGrid();
      renderExporters();
      renderBackfills();
      if (!document.documentElement.dataset.firstRenderMs) {
        // How long from navigation to the first full picture: what "loads in under a second" is measured by.
        document.documentElement.dataset.firstRenderMs = String(Math.round(performance.now()));
      }
      const unreachable = !$('unreachable').hidden;
      $('refreshed').textContent = (unreachable ? 'Gateway unreachable; last data from ' : 'Refreshed ') +
        new Date().toLocaleTimeString() + (problems.length && !unreachable ? ' (some views failed: ' + problems.join('; ') + ')' : '');
    } finally {
      refreshing = false;
    }
  }

  function wire() {
    $('action-pause').onclick = () => openExportingDialog('pause');
    $('action-soft-pause').onclick = () => openExportingDialog('softPause');
    $('action-resume').onclick = () => openExportingDialog('resume');
    $('action-rebalance').onclick = () => openRebalanceDialog();
    $('token-button').onclick = () => askToken(sessionStorage.getItem(TOKEN_KEY) ? 'A token is set for this tab; enter another, or forget it.' : null);
    $('error-close').onclick = () => { $('error').hidden = true; };
    refresh();
    setInterval(refresh, REFRESH_MS);
  }

  document.addEventListener('DOMContentLoaded', wire);
})();
