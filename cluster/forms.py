"""Page forms: they parse and check types; the services own the rules."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django import forms
from django.conf import settings
from django.core.validators import MaxValueValidator
from django.core.files.uploadedfile import UploadedFile

from cluster.core.manual_assignment import (MAX_FILE_BYTES, InvalidReplicaMap,
                                            decode_assignment_file)
from cluster.core.spu_groups import MAX_GROUP_REPLICAS
from cluster.core.spus import MAX_ENDPOINT_LENGTH, MAX_SPU_ID
from cluster.core.topic_controller import MAX_LAG, MAX_PARTITIONS, MAX_REPLICATION
from cluster.errors import DomainError, InvalidInput

ACKS_CHOICES = [("1", "1: the leader has it"), ("all", "all: the whole LRS has it"),
                ("0", "0: fire and forget")]


def read_assignment_upload(upload: UploadedFile) -> object:
    """The JSON value of an uploaded replica assignment file (pages and API).

    The size is checked before reading so a large upload is never loaded.
    """
    if upload.size is not None and upload.size > MAX_FILE_BYTES:
        raise InvalidInput(f"the file is {upload.size:,} bytes; at most 1 MiB "
                           f"({MAX_FILE_BYTES:,} bytes) is accepted", field="file",
                           details=[{"partition": None, "rule": "size",
                                     "message": "file: larger than 1 MiB"}])
    return read_assignment_text(upload.read())


def read_assignment_text(text: str | bytes) -> object:
    """The JSON value of a replica assignment file's content (an upload, or one kept)."""
    try:
        return decode_assignment_file(text)
    except InvalidReplicaMap as exc:
        raise InvalidInput(f"the file is not a JSON replica assignment: {exc}",
                           field="file",
                           details=[p.as_dict() for p in exc.problems]) from None


def add_domain_error(form: forms.Form, error: DomainError) -> None:
    """Show a service's refusal next to the field it names.

    A form may rename service fields (``service_fields``): the upload form's
    ``file`` is what the service calls ``replica_assignment``.
    """
    field = getattr(form, "service_fields", {}).get(error.field, error.field)
    field = field if field in form.fields else None
    form.add_error(field, error.message)


class SpuRegisterForm(forms.Form):
    id = forms.IntegerField(label="SPU id", min_value=0, max_value=MAX_SPU_ID)
    rack = forms.CharField(required=False, max_length=63,
                           help_text="Optional; rack-aware assignment needs one on every SPU.")
    public = forms.CharField(label="Public endpoint", required=False,
                             max_length=MAX_ENDPOINT_LENGTH,
                             widget=forms.TextInput(attrs={"placeholder": "localhost:9005"}))
    private = forms.CharField(label="Private endpoint", required=False,
                              max_length=MAX_ENDPOINT_LENGTH,
                              widget=forms.TextInput(attrs={"placeholder": "localhost:9006"}))


class SpuGroupCreateForm(forms.Form):
    name = forms.CharField(max_length=63)
    replicas = forms.IntegerField(min_value=1, max_value=MAX_GROUP_REPLICAS,
                                  help_text="Number of managed SPUs.")
    min_id = forms.IntegerField(label="Min id", required=False, min_value=0,
                                max_value=MAX_SPU_ID,
                                help_text="Id of the first SPU; empty: after the highest id.")
    rack = forms.CharField(required=False, max_length=63)
    storage_size = forms.CharField(label="Storage size", initial="1Gi", max_length=16)


class SpuGroupScaleForm(forms.Form):
    replicas = forms.IntegerField(min_value=1, max_value=MAX_GROUP_REPLICAS)


class TopicCreateForm(forms.Form):
    name = forms.CharField(max_length=63)
    partitions = forms.IntegerField(min_value=1, max_value=MAX_PARTITIONS, initial=6)
    replication = forms.IntegerField(label="Replication factor", min_value=1,
                                     max_value=MAX_REPLICATION, initial=3)
    ignore_rack_assignment = forms.BooleanField(required=False)
    min_lrs = forms.IntegerField(label="Min LRS", min_value=1, max_value=MAX_REPLICATION,
                                 initial=1,
                                 help_text="Smallest LRS that still accepts acks=all writes.")
    max_lag = forms.IntegerField(label="Max lag", min_value=1, max_value=MAX_LAG, initial=1000,
                                 help_text="Records a follower may lag before leaving the LRS.")
    # The start index the preview used, to tell the operator if Create differs.
    preview_start = forms.IntegerField(required=False, min_value=0, max_value=2**63 - 1,
                                       widget=forms.HiddenInput)


class AssignmentUploadForm(forms.Form):
    """A file, or the one chosen before (browsers empty a file input after a submit,
    so the page keeps the content in hidden fields and offers it again)."""
    service_fields = {"replica_assignment": "file"}
    name = forms.CharField(label="Topic name", max_length=63)
    file = forms.FileField(label="Replica assignment file (JSON, at most 1 MiB)",
                           required=False, widget=forms.ClearableFileInput(
                               attrs={"accept": ".json,application/json"}))
    kept_file = forms.CharField(required=False, strip=False, max_length=MAX_FILE_BYTES,
                                widget=forms.HiddenInput)
    kept_name = forms.CharField(required=False, max_length=255, widget=forms.HiddenInput)

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if not data.get("file") and not data.get("kept_file") and "file" not in self.errors:
            self.add_error("file", "Choose a replica assignment file.")
        return data

    def content(self) -> object:
        """The chosen file's JSON value; a new file is kept for the next submit."""
        upload = self.cleaned_data.get("file")
        if not upload:
            return read_assignment_text(self.cleaned_data["kept_file"])
        if upload.size is not None and upload.size <= MAX_FILE_BYTES:
            self._keep(upload)
        return read_assignment_upload(upload)

    def _keep(self, upload: UploadedFile) -> None:
        try:
            text = upload.read().decode("utf-8")
        except UnicodeDecodeError:
            return  # not JSON anyway; the refusal says so
        finally:
            upload.seek(0)
        self.data = self.data.copy()
        self.data["kept_file"], self.data["kept_name"] = text, upload.name or "the file"

    @property
    def kept_file_name(self) -> str:
        """The name of the file kept for the next submit ("" when none is kept)."""
        return self.data.get("kept_name", "") if self.data.get("kept_file") else ""



class ProduceForm(forms.Form):
    partition = forms.IntegerField(min_value=0, initial=0)
    count = forms.IntegerField(label="Records", min_value=1, initial=10)
    acks = forms.ChoiceField(label="Acks", choices=ACKS_CHOICES, initial="1",
                             help_text="acks=all is refused while fewer replicas than the "
                                       "topic's min LRS are live.")

    def __init__(self, *args: Any, partitions: int = 1, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # The limit is read per form so a changed setting applies at once, as in the API.
        count = self.fields["count"]
        count.max_value = settings.PRODUCE_MAX_RECORDS
        count.validators.append(MaxValueValidator(settings.PRODUCE_MAX_RECORDS))
        count.widget.attrs["max"] = settings.PRODUCE_MAX_RECORDS
        self.fields["partition"].widget.attrs.update(min=0, max=max(partitions - 1, 0))
        self.fields["partition"].validators.append(_below(partitions))


def _below(partitions: int) -> Callable[[int], None]:
    def check(value: int) -> None:
        if value >= partitions:
            raise forms.ValidationError(f"this topic has partitions 0..{partitions - 1}")
    return check
