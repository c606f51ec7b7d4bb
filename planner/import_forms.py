"""Forms of the import page: Kafka's tool outputs in, a byte plan of the snapshot out."""
from __future__ import annotations

from django import forms


class ImportForm(forms.Form):
    describe = forms.FileField(label="kafka-topics.sh --describe",
                               help_text="The output for all topics (required).")
    log_dirs = forms.FileField(label="kafka-log-dirs.sh --describe", required=False,
                               help_text="Sizes of every replica; disk capacity on newer "
                                         "versions.")
    brokers = forms.FileField(label="kafka-broker-api-versions.sh", required=False,
                              help_text="Broker ids, racks and endpoints.")
    plan_only = forms.BooleanField(label="Planning snapshot only (leave the store alone)",
                                   required=False, initial=True)

    def texts(self) -> dict[str, tuple[str, str] | None]:
        """Field -> (file name, text), None where no file was given; a file that is not
        UTF-8 text is an error on its field."""
        out: dict[str, tuple[str, str] | None] = {}
        for name in ("describe", "log_dirs", "brokers"):
            upload = self.cleaned_data.get(name)
            if upload is None:
                out[name] = None
                continue
            try:
                out[name] = (upload.name, upload.read().decode("utf-8"))
            except UnicodeDecodeError:
                self.add_error(name, f"{upload.name} is not text (not UTF-8).")
        return out


class BytePlanForm(forms.Form):
    max_disk_percent = forms.FloatField(label="Most disk per SPU (%)", initial=80,
                                        min_value=1, max_value=100)
    topics = forms.CharField(label="Only topics", required=False, max_length=5000,
                             help_text="Comma-separated; empty: every topic.")
    exclude_topics = forms.CharField(label="Except topics", required=False, max_length=5000)
    leaders_only = forms.BooleanField(label="Leaders only (no data moves)", required=False)
    throttle_bytes_per_s = forms.IntegerField(label="Throttle (bytes/s per SPU)",
                                              required=False, min_value=1,
                                              help_text="For the time estimate.")
    max_moves_per_spu = forms.IntegerField(label="Moves at a time per SPU", required=False,
                                           min_value=1)

    @staticmethod
    def names(text: str) -> frozenset[str] | None:
        items = frozenset(t.strip() for t in text.split(",") if t.strip())
        return items or None
