# The smoothed pace the plan page's estimated finish is read from (planner/core/execution/pace.py).

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('planner', '0008_execution_waiting'),
    ]

    operations = [
        migrations.AddField(
            model_name='planexecution',
            name='pace',
            field=models.JSONField(blank=True, default=dict),
        ),
    ]
