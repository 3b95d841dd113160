// The demo merchant's return page (in the challenge frame): hands verification's answer to the checkout.
parent.postMessage({ demoVerification: JSON.parse(document.body.dataset.verification) }, location.origin);
