// The demo checkout's page script: no framework, no outside request (CSP default-src 'self').
(async () => {
  const $ = (id) => document.getElementById(id);
  const config = await (await fetch('/demo/config')).json();
  const status = (text) => ($('status').textContent = text);

  for (const s of config.scenarios) {
    const then = s.verification ? ` → ${s.verification}` : '';
    $('name').add(new Option(`${s.cardHolderName} (${s.authenticate}${then})`, s.cardHolderName));
  }
  if (config.environment === 'live') {
    // A local live checkout: the fake 3DS Server provider decides by the card's last four digits.
    $('environment').textContent = 'live environment, local 3DS Server provider';
    $('name-note').textContent = 'Cardholder name';
    $('name').add(new Option('Jane Doe', 'Jane Doe'));
    const samples = $('samples');
    samples.replaceChildren('Try: ');
    for (const c of config.liveCards) {
      const button = document.createElement('button');
      button.type = 'button';
      button.dataset.card = c.cardNumber;
      button.textContent = c.label;
      samples.append(button, ' ');
    }
  } else {
    $('name').add(new Option('any other name (risk rules decide)', 'Jane Doe'));
    $('name').value = '3ds2-challenge-identified';
  }
  for (const size of config.windowSizes) $('window').add(new Option(size, size));
  $('window').value = '390x400';

  const digits = () => $('card').value.replace(/\D/g, '');

  // The BIN answer as the cardholder types: lookup by prefix, from the page, with the publishable key.
  let asked = '';
  let timer;
  async function showBin() {
    const prefix = digits().slice(0, 8);
    if (prefix.length < 6) {
      asked = '';
      $('bin').textContent = 'Type at least 6 digits.';
      $('bin').className = 'bin';
      return;
    }
    if (prefix === asked) return;
    asked = prefix;
    const response = await fetch('/api/cardBin/binLookup', {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${config.publishableKey}`,
        'Content-Type': 'application/json',
        'WP-Api-Version': '1',
      },
      body: JSON.stringify({ merchant: { entity: config.entity }, bin: prefix }),
    });
    const answer = await response.json();
    if (asked !== prefix) return;
    const box = $('bin');
    box.dataset.answer = JSON.stringify(answer);
    if (!response.ok) {
      box.className = 'bin unknown';
      box.textContent = `${answer.errorName}: ${answer.message}`;
      return;
    }
    box.className = 'bin';
    const parts = [
      (answer.brand ?? ['brand unknown']).join(' + '),
      answer.fundingType && answer.fundingType !== 'unknown' ? answer.fundingType : null,
      answer.issuerName ?? null,
      answer.countryCode && answer.countryCode !== 'unknown' ? answer.countryCode : null,
      answer.currency ?? null,
      `BIN ${answer.bin}`,
    ].filter(Boolean);
    box.textContent = parts.join(' · ');
  }
  $('card').addEventListener('input', () => {
    clearTimeout(timer);
    timer = setTimeout(showBin, 120);
  });
  for (const sample of document.querySelectorAll('[data-card]')) {
    sample.addEventListener('click', () => {
      $('card').value = sample.dataset.card.replace(/(\d{4})(?=\d)/g, '$1 ');
      showBin();
    });
  }

  async function merchant(path, body) {
    const response = await fetch(`/demo/merchant/${path}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    const answer = await response.json();
    if (!response.ok) throw Object.assign(new Error(answer.message), { answer });
    return answer;
  }

  /** Posts fields into a new iframe; hidden when no size is given. */
  function postIntoFrame(name, url, fields, size) {
    const frame = document.createElement('iframe');
    frame.name = name;
    frame.id = `${name}-frame`;
    if (size) {
      frame.width = size.width;
      frame.height = size.height;
      $('challenge-box').replaceChildren(frame);
    } else {
      frame.className = 'ddc';
      document.body.appendChild(frame);
    }
    const form = document.createElement('form');
    form.method = 'POST';
    form.action = url;
    form.target = name;
    for (const [k, v] of Object.entries(fields)) {
      const input = document.createElement('input');
      input.type = 'hidden';
      input.name = k;
      input.value = v;
      form.appendChild(input);
    }
    document.body.appendChild(form);
    form.submit();
    form.remove();
    return frame;
  }

  /** The next message from a frame of this page that passes `test`. */
  function message(test, timeoutMs) {
    return new Promise((resolve, reject) => {
      const timeout = setTimeout(() => reject(new Error('no answer from the frame')), timeoutMs);
      window.addEventListener('message', function listen(event) {
        if (event.origin !== location.origin) return;
        let data = event.data;
        if (typeof data === 'string') {
          try {
            data = JSON.parse(data);
          } catch {
            return;
          }
        }
        if (!test(data)) return;
        clearTimeout(timeout);
        window.removeEventListener('message', listen);
        resolve(data);
      });
    });
  }

  function show(answer) {
    $('result-box').hidden = false;
    $('outcome').textContent = answer.outcome ?? answer.errorName;
    $('result').textContent = JSON.stringify(answer, null, 2);
    status('done');
    eventsSoon();
  }

  // Events: the demo merchant's latest, through its server (GET /events).
  async function showEvents() {
    const response = await fetch('/demo/merchant/events');
    if (!response.ok) return;
    const { events } = await response.json();
    const list = $('events-list');
    list.replaceChildren();
    for (const e of events) {
      const item = document.createElement('li');
      const about = e.data.outcome ?? e.data.tokenId ?? e.data.endpointId ?? '';
      const deliveries = e.deliveries.length
        ? e.deliveries.map((d) => `${d.state} at ${d.url ?? `${d.endpointId} (deleted)`}`).join(', ')
        : 'no endpoint configured';
      item.textContent = `${e.createdAt.slice(11, 19)} ${e.eventType} ${about} (${deliveries})`;
      item.title = e.eventId;
      item.dataset.eventType = e.eventType;
      item.dataset.about = e.data.transactionReference ?? e.data.tokenId ?? '';
      list.append(item);
    }
    if (events.length === 0) list.append(Object.assign(document.createElement('li'), { textContent: 'No event yet.' }));
  }
  /** Events leave after the answer that caused them: look now and again a moment later. */
  function eventsSoon() {
    showEvents();
    setTimeout(showEvents, 1_000);
  }
  $('events-refresh').addEventListener('click', showEvents);
  showEvents();

  const SIZES = { '250x400': [250, 400], '390x400': [390, 400], '500x600': [500, 600], '600x400': [600, 400] };

  // Saved cards: the shopper's tokens (namespace demo-shopper), through the demo merchant's server.
  async function cardsApi(method, path, body) {
    const response = await fetch(`/demo/merchant/${path}`, {
      method,
      headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, body: await response.json() };
  }
  const savedStatus = (text) => ($('saved-status').textContent = text);

  async function showCards() {
    const { body } = await cardsApi('GET', 'cards');
    const list = $('saved-list');
    list.replaceChildren();
    for (const token of body._embedded?.tokens ?? []) {
      const card = token.paymentInstrument;
      const item = document.createElement('li');
      item.dataset.tokenId = token.tokenId;
      const ref = reference(token);
      const expiry = `${String(card.cardExpiryDate.month).padStart(2, '0')}/${card.cardExpiryDate.year}`;
      const line = document.createElement('div');
      line.className = 'token';
      line.textContent = `${card.cardNumber} · ${card.cardHolderName ?? 'no name'} · expires ${expiry} · token until ${token.tokenExpiryDateTime.slice(0, 10)}`;
      const name = document.createElement('input');
      name.placeholder = 'new cardholder name';
      name.className = 'new-name';
      const rename = button('Update name', () => change(ref, { attribute: 'cardHolderName', value: name.value }));
      rename.className = 'rename';
      const later = button('Expiry +1 year', () =>
        change(ref, {
          attribute: 'cardExpiryDate',
          value: { month: card.cardExpiryDate.month, year: card.cardExpiryDate.year + 1 },
        }),
      );
      later.className = 'extend';
      const remove = button('Delete', () => change(ref, { delete: true }));
      remove.className = 'delete';
      item.append(line, name, rename, later, remove);
      list.append(item);
    }
    if (list.children.length === 0) savedStatus('No saved card yet.');
  }

  function button(text, onClick) {
    const b = document.createElement('button');
    b.type = 'button';
    b.textContent = text;
    b.addEventListener('click', onClick);
    return b;
  }

  /** A token's reference: the last segment of its href, which names it in the API's paths. */
  function reference(token) {
    return token._links['tokens:token'].href.split('/').pop();
  }

  async function change(token, what) {
    const { status, body } = await cardsApi('POST', 'cards/change', { token, ...what });
    savedStatus(status < 300 ? 'Saved card changed.' : `${body.errorName}: ${body.message}`);
    await showCards();
    eventsSoon();
  }

  $('save-card').addEventListener('click', async () => {
    const { status, body } = await cardsApi('POST', 'cards', {
      cardNumber: digits(),
      month: Number($('month').value),
      year: Number($('year').value),
      cardHolderName: $('name').value,
    });
    $('saved-status').replaceChildren();
    if (status === 201 || status === 200) savedStatus(status === 201 ? 'Card saved.' : 'This card was saved already.');
    else if (status === 409) {
      // Saved already with other details: the conflict can be accepted (the token takes them).
      const conflictId = body._links['tokens:conflicts'].href.split('/').pop();
      savedStatus(`Saved already with other details (${JSON.stringify(body.conflicts.paymentInstrument ?? {})}). `);
      const accept = button('Accept the new details', () => change(reference(body), { conflict: conflictId }));
      accept.id = 'accept-conflict';
      $('saved-status').append(accept);
    } else savedStatus(`${body.errorName}: ${body.message}`);
    await showCards();
  });
  showCards();

  // Event endpoints: the demo merchant's, through its server (/events/endpoints). A new endpoint's
  // secret is shown once, in the page only: never stored, so a reload no longer has it.
  const endpointsStatus = (text) => ($('endpoints-status').textContent = text);
  /** Each endpoint's latest ping (its box), kept across a new listing. */
  const pings = new Map();

  async function showEndpoints() {
    const { status, body } = await cardsApi('GET', 'endpoints');
    if (status !== 200) return endpointsStatus(`${body.errorName}: ${body.message}`);
    const list = $('endpoints-list');
    list.replaceChildren();
    for (const endpoint of body.endpoints) {
      const item = document.createElement('li');
      item.dataset.endpointId = endpoint.endpointId;
      item.dataset.state = endpoint.state;
      const line = document.createElement('div');
      line.className = 'endpoint';
      const state = endpoint.disabledReason ? `${endpoint.state} (${endpoint.disabledReason})` : endpoint.state;
      const events = endpoint.events === 'all' ? 'all events' : endpoint.events.join(', ');
      line.textContent = `${endpoint.url} · ${state} · ${events} · since ${endpoint.createdAt.slice(0, 10)}`;
      line.title = endpoint.endpointId;
      const ping = button('Ping', () => pingEndpoint(endpoint.endpointId));
      ping.className = 'ping';
      const remove = button('Delete', () => deleteEndpoint(endpoint.endpointId));
      remove.className = 'delete';
      item.append(line, ping, remove);
      if (pings.has(endpoint.endpointId)) item.append(pings.get(endpoint.endpointId));
      list.append(item);
    }
    if (body.endpoints.length === 0) endpointsStatus('No endpoint yet.');
  }

  $('endpoint-create').addEventListener('click', async () => {
    $('endpoint-secret').hidden = true;
    $('endpoint-secret-value').textContent = '';
    const { status, body } = await cardsApi('POST', 'endpoints', { url: $('endpoint-url').value });
    if (status !== 201) {
      const where = body.validationErrors?.map((e) => e.message).join(' ') ?? '';
      endpointsStatus(`${body.errorName}: ${body.message} ${where}`.trim());
      return;
    }
    $('endpoint-secret-of').textContent = body.url;
    $('endpoint-secret-value').textContent = body.secret;
    $('endpoint-secret').hidden = false;
    await showEndpoints();
    endpointsStatus(`Endpoint ${body.endpointId} added.`);
  });
  $('endpoints-refresh').addEventListener('click', showEndpoints);

  async function deleteEndpoint(endpointId) {
    const { status, body } = await cardsApi('POST', `endpoints/${endpointId}/delete`);
    pings.delete(endpointId);
    await showEndpoints();
    endpointsStatus(status === 200 ? `Endpoint ${endpointId} deleted.` : `${body.errorName}: ${body.message}`);
    eventsSoon();
  }

  async function pingEndpoint(endpointId) {
    const { status, body } = await cardsApi('POST', `endpoints/${endpointId}/ping`);
    if (status !== 202) return endpointsStatus(`${body.errorName}: ${body.message}`);
    const box = document.createElement('div');
    box.className = 'ping-result';
    box.dataset.eventId = body.eventId;
    pings.get(endpointId)?.remove();
    pings.set(endpointId, box);
    document.querySelector(`#endpoints-list li[data-endpoint-id="${endpointId}"]`)?.append(box);
    await followPing(box, body.eventId);
    eventsSoon();
  }

  /** Shows the ping's deliveries again every second while one is pending (up to 30 times). */
  async function followPing(box, eventId) {
    for (let i = 0; i < 30; i++) {
      const pending = await showPing(box, eventId);
      if (!pending || !box.isConnected) return;
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
  }

  /** The ping's deliveries, each with its attempts (`GET /events/{eventId}`); true while one is pending. */
  async function showPing(box, eventId) {
    const { status, body } = await cardsApi('GET', `events/${eventId}`);
    const title = document.createElement('div');
    title.className = 'ping-title';
    const again = button('Check again', () => followPing(box, eventId));
    again.className = 'check-again';
    if (status !== 200) {
      title.textContent = `Ping ${eventId}: ${body.errorName}: ${body.message}`;
      box.replaceChildren(title, again);
      return false;
    }
    title.textContent = `Ping ${eventId} (${body.createdAt.slice(11, 19)})`;
    const deliveries = document.createElement('ul');
    deliveries.className = 'deliveries';
    for (const d of body.deliveries) {
      const item = document.createElement('li');
      item.className = 'delivery';
      item.dataset.state = d.state;
      const next = d.nextAttemptAt ? `, next attempt ${d.nextAttemptAt.slice(11, 19)}` : '';
      const line = document.createElement('div');
      line.textContent = `Delivery: ${d.state}, ${d.attempts} attempt${d.attempts === 1 ? '' : 's'}${next}`;
      const attempts = document.createElement('ol');
      attempts.className = 'attempts';
      for (const a of d.history ?? []) {
        const attempt = document.createElement('li');
        attempt.className = 'attempt';
        if (a.status !== undefined) attempt.dataset.status = String(a.status);
        const answer = a.status !== undefined ? `HTTP ${a.status}` : '';
        const error = a.error !== undefined && a.error !== 'status' ? a.error : '';
        attempt.textContent = `${a.at.slice(11, 19)} · ${[answer, error].filter(Boolean).join(' ')} · ${a.durationMs} ms`;
        attempts.append(attempt);
      }
      item.append(line, attempts);
      deliveries.append(item);
    }
    box.replaceChildren(title, again, deliveries);
    return body.deliveries.some((d) => d.state === 'pending');
  }
  showEndpoints();

  // A subscription: once its first payment is authenticated, the merchant renews it with 3RI.
  let subscription;
  function subscribed(answer, transactionReference, card) {
    $('renewals-list').replaceChildren();
    subscription = answer.outcome === 'authenticated' ? { transactionReference, card } : undefined;
    $('renewals').hidden = subscription === undefined;
    $('renewal-prior').textContent = transactionReference;
  }
  $('renew').addEventListener('click', async () => {
    if (!subscription) return;
    $('renew').disabled = true;
    const item = document.createElement('li');
    try {
      const answer = await merchant('renew', {
        ...subscription.card,
        priorTransactionReference: subscription.transactionReference,
      });
      item.dataset.outcome = answer.outcome;
      item.textContent = `${answer.transactionReference}: ${answer.outcome}, status ${answer.status}${
        answer.authentication ? `, ECI ${answer.authentication.eci}` : ''
      }`;
      eventsSoon();
    } catch (e) {
      const a = e.answer ?? {};
      const at = a.validationErrors?.[0];
      item.dataset.outcome = a.errorName ?? 'error';
      item.textContent = `refused: ${at ? `${at.message} (${at.jsonPath})` : (a.message ?? String(e.message))}`;
    } finally {
      $('renewals-list').append(item);
      $('renew').disabled = false;
    }
  });

  $('checkout').addEventListener('submit', async (event) => {
    event.preventDefault();
    $('pay').disabled = true;
    $('result-box').hidden = true;
    $('challenge-box').replaceChildren();
    const card = { cardNumber: digits(), month: Number($('month').value), year: Number($('year').value) };
    try {
      status('collecting device data');
      const init = await merchant('init', card);
      const collected = message((d) => d.MessageType === 'profile.completed', 10_000);
      postIntoFrame('ddc', init.deviceDataCollection.url, {
        Bin: init.deviceDataCollection.bin ?? '',
        JWT: init.deviceDataCollection.jwt,
      });
      const ddc = await collected;
      status('authenticating');
      const windowSize = $('window').value;
      const subscribe = $('subscribe').checked;
      const auth = await merchant('authenticate', {
        ...card,
        transactionReference: init.transactionReference,
        collectionReference: ddc.SessionId ?? '',
        cardHolderName: $('name').value,
        windowSize,
        subscribe,
      });
      const done = (answer) => {
        show(answer);
        if (subscribe) subscribed(answer, init.transactionReference, { ...card, cardHolderName: $('name').value });
      };
      if (auth.outcome !== 'challenged') return done(auth);
      status('challenged');
      const [width, height] = SIZES[windowSize] ?? ['100%', 600];
      const verified = message((d) => d.demoVerification !== undefined, 600_000);
      postIntoFrame(
        'challenge',
        auth.challenge.url,
        { JWT: auth.challenge.jwt, MD: init.transactionReference },
        { width, height },
      );
      const { demoVerification } = await verified;
      $('challenge-box').replaceChildren();
      done(demoVerification);
    } catch (e) {
      show(e.answer ?? { errorName: 'error', message: String(e.message) });
    } finally {
      $('pay').disabled = false;
    }
  });
})();
