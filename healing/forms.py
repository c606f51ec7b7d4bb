from __future__ import annotations

from django import forms

from healing import core


class ModeForm(forms.Form):
    mode = forms.ChoiceField(choices=[(m.value, m.value) for m in core.Mode])


class SettingForm(forms.Form):
    name = forms.ChoiceField(choices=[(n, n) for n in core.SETTING_NAMES])
    value = forms.CharField(max_length=32)
