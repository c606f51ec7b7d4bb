from django.contrib import admin

from healing.models import Anomaly, HealingConfig

admin.site.register(HealingConfig)
admin.site.register(Anomaly)
