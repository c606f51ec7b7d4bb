// Ask before destructive forms (those with data-confirm); everything else is plain HTML.
document.addEventListener("submit", (event) => {
  const form = event.target;
  const question = form.dataset && form.dataset.confirm;
  if (question && !window.confirm(question)) event.preventDefault();
});
