// Renders /openapi.json with Swagger UI, every byte from this origin (CSP default-src 'self').
window.ui = SwaggerUIBundle({
  url: '/openapi.json',
  dom_id: '#swagger-ui',
  // No top bar: its URL box could load any document.
  layout: 'BaseLayout',
  presets: [SwaggerUIBundle.presets.apis],
  // The default is a badge image from validator.swagger.io (skipped only on localhost).
  validatorUrl: null,
  deepLinking: true,
  // A reference, not a console: no "Try it out".
  supportedSubmitMethods: [],
  queryConfigEnabled: false,
});
